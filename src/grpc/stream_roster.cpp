// StreamRoster: the open quota streams, ended together at stop.
#include "ratelimitd/grpc/stream_roster.hpp"

#include "ratelimitd/grpc/quota_stream.hpp"

namespace ratelimitd::rls {

bool StreamRoster::enter(QuotaStream* stream) {
    const std::lock_guard lock(mutex_);
    if (ending_) return false;
    streams_.insert(stream);
    return true;
}

void StreamRoster::leave(QuotaStream* stream) {
    const std::lock_guard lock(mutex_);
    streams_.erase(stream);
}

void StreamRoster::end_all() {
    const std::lock_guard lock(mutex_);
    ending_ = true;
    for (QuotaStream* stream : streams_) stream->end();
}

}  // namespace ratelimitd::rls
