// The quota streams each connection holds open, for the per-connection cap.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace ratelimitd::rls {

/// Counts open streams by peer ("ipv4:127.0.0.1:5555", one per connection: gRPC names the
/// peer by its address and port). A stream is admitted while its connection holds fewer than
/// the cap; the entry goes with the connection's last stream, so the map holds only peers
/// with a stream open (at most grpc_max_connections of them).
/// @par Thread Safety
/// All members may be called from any thread.
class PeerStreams {
public:
    explicit PeerStreams(std::size_t cap_per_peer) : cap_(cap_per_peer) {}

    /// Counts one more stream of `peer`, or false (nothing counted) at the cap.
    bool admit(const std::string& peer);
    /// Forgets one stream admitted for `peer`.
    void release(const std::string& peer);

private:
    std::size_t cap_;
    std::mutex mutex_;
    std::unordered_map<std::string, std::size_t> open_;
};

}  // namespace ratelimitd::rls
