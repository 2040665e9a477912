// The backend of envoyproxy/ratelimit's REDIS_PERSECOND: two backends, one UnitRoutingStore
// per server thread over their stores (unit_routing_store.hpp).
#pragma once

#include "ratelimitd/store/backend.hpp"
#include "ratelimitd/store/unit_routing_store.hpp"

#include <memory>
#include <vector>

namespace ratelimitd::store {

/// `per_second` holds the counters of per-second limits (counts_per_second()), `other_units`
/// every other. Each keeps its own connections, denial cache and reset channel.
/// @par Thread Safety
/// As Backend's.
class UnitRoutingBackend final : public Backend {
public:
    UnitRoutingBackend(std::unique_ptr<Backend> other_units, std::unique_ptr<Backend> per_second);

    /// The first store's kind: ratelimitd_build_info's store label.
    std::string_view kind() const noexcept override { return other_units_->kind(); }
    std::optional<std::string> refusal(const policy::Registry& registry) const override;
    Store& add_thread(boost::asio::any_io_executor thread) override;
    void start(boost::asio::any_io_executor main) override;
    void stop() override;
    void stop_thread(std::size_t index) override;
    /// Both stores' figures added up: one set of series, as for one store.
    BackendStats stats() const override;
    std::string describe() const override;

private:
    std::unique_ptr<Backend> other_units_;
    std::unique_ptr<Backend> per_second_;
    std::vector<std::unique_ptr<UnitRoutingStore>> stores_;  // one per server thread
};

}  // namespace ratelimitd::store
