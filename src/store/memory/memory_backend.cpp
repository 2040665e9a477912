// MemoryBackend: the embedded store for every thread, and its sweep timer; its registration.
#include "ratelimitd/store/memory/memory_backend.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::store::memory {
namespace {

result<std::unique_ptr<Backend>> open(std::string_view /*url*/, BackendOptions options) {
    return std::unique_ptr<Backend>(std::make_unique<MemoryBackend>(options));
}

}  // namespace

const BackendKind memory_backend_kind{
    .name = "embedded",
    .help_position = 90,  // last: the store of no URL
    .usage = "Without a Redis URL anywhere, the embedded store keeps limits per instance.\n",
    .open = &open,
};

MemoryBackend::MemoryBackend(const BackendOptions& options) : store_(*options.clock, options.memory_max_keys) {}

MemoryBackend::~MemoryBackend() { stop(); }

Store& MemoryBackend::add_thread(boost::asio::any_io_executor /*thread*/) { return store_; }

void MemoryBackend::start(boost::asio::any_io_executor main) {
    spdlog::warn("no Redis URL given: using the embedded store; limits are per instance, "
                 "not shared with other ratelimitd instances");
    sweeper_.emplace(std::move(main), store_);
    sweeper_->start();
}

void MemoryBackend::stop() {
    if (sweeper_) sweeper_->stop();
}

BackendStats MemoryBackend::stats() const {
    BackendStats s;
    s.keys = BackendStats::Keys{store_.key_count(), store_.evictions()};
    return s;
}

}  // namespace ratelimitd::store::memory
