// PeerStreams: open quota streams per connection.
#include "ratelimitd/grpc/peer_streams.hpp"

namespace ratelimitd::rls {

bool PeerStreams::admit(const std::string& peer) {
    const std::lock_guard lock(mutex_);
    auto& open = open_[peer];
    if (open >= cap_) {
        if (open == 0) open_.erase(peer);
        return false;
    }
    ++open;
    return true;
}

void PeerStreams::release(const std::string& peer) {
    const std::lock_guard lock(mutex_);
    const auto it = open_.find(peer);
    if (it == open_.end()) return;
    if (--it->second == 0) open_.erase(it);
}

}  // namespace ratelimitd::rls
