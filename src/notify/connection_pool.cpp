// ConnectionPool: newest first, so the connections that go unused are the ones that age out.
#include "ratelimitd/notify/connection_pool.hpp"

namespace ratelimitd::notify {

std::optional<boost::beast::tcp_stream> ConnectionPool::take(const std::string& address) {
    const auto it = idle_.find(address);
    if (it == idle_.end() || it->second.empty()) return std::nullopt;
    boost::beast::tcp_stream stream = std::move(it->second.back());
    it->second.pop_back();
    return stream;
}

void ConnectionPool::give_back(const std::string& address, boost::beast::tcp_stream stream) {
    auto& idle = idle_[address];
    if (idle.size() >= per_address_) return;  // closed as it goes
    idle.push_back(std::move(stream));
}

}  // namespace ratelimitd::notify
