// The backend used when no store URL is given: the embedded store.
#pragma once

#include "ratelimitd/store/backend.hpp"
#include "ratelimitd/store/backend_kind.hpp"
#include "ratelimitd/store/memory/memory_store.hpp"
#include "ratelimitd/store/memory/memory_sweeper.hpp"

#include <optional>

namespace ratelimitd::store::memory {

/// One MemoryStore shared by every server thread (it locks per shard), swept of idle keys
/// from a timer on the accept thread, so its memory follows the live tenants even on shards
/// that get no more checks. Limits are per instance.
class MemoryBackend final : public Backend {
public:
    /// Needs options.clock.
    explicit MemoryBackend(const BackendOptions& options);
    ~MemoryBackend() override;

    std::string_view kind() const noexcept override { return "embedded"; }
    Store& add_thread(boost::asio::any_io_executor thread) override;
    void start(boost::asio::any_io_executor main) override;
    void stop() override;
    void stop_thread(std::size_t /*index*/) override {}
    BackendStats stats() const override;
    std::string describe() const override { return "embedded"; }

private:
    MemoryStore store_;
    std::optional<MemorySweeper> sweeper_;
};

/// The store of no URL: its --help line, made from the options alone.
extern const BackendKind memory_backend_kind;

}  // namespace ratelimitd::store::memory
