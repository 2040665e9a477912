// MemoryBackend: the embedded store for every thread, and its sweep timer.
#include "ratelimitd/store/memory/memory_backend.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::store::memory {

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
