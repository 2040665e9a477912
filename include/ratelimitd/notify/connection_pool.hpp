// Idle keep-alive connections to webhook receivers, so that a target taking many events does
// not pay a TCP handshake (and a TIME_WAIT socket) for each.
#pragma once

#include <boost/beast/core/tcp_stream.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::notify {

/// Idle connections by receiver address ("host:port", not the target's name: a reload may point
/// a name elsewhere), at most `per_address` each (the sender's cap of attempts in flight per
/// target). Not thread-safe: the notifier's thread only.
class ConnectionPool {
public:
    explicit ConnectionPool(std::size_t per_address) : per_address_(per_address) {}

    /// An idle connection to `address`, taken out, or nothing.
    std::optional<boost::beast::tcp_stream> take(const std::string& address);

    /// Keeps `stream` for the next event to `address`, or closes it when `per_address` wait
    /// already.
    void give_back(const std::string& address, boost::beast::tcp_stream stream);

    /// Closes every idle connection (before the io_context they belong to goes).
    void clear() { idle_.clear(); }

private:
    std::size_t per_address_;
    std::map<std::string, std::vector<boost::beast::tcp_stream>, std::less<>> idle_;
};

}  // namespace ratelimitd::notify
