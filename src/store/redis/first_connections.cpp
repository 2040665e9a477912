// await_first_connections: a bounded poll, then a warning.
#include "ratelimitd/store/redis/first_connections.hpp"

#include <spdlog/spdlog.h>

#include <thread>

namespace ratelimitd::store::redis {

bool await_first_connections(const std::function<bool()>& connected, const std::function<std::string()>& describe,
                             std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!connected() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (connected()) return true;
    spdlog::warn("redis at {} is not answering yet; checks answer by each policy's "
                 "on_store_error until it does", describe());
    return false;
}

}  // namespace ratelimitd::store::redis
