// The quota streams open now, so a stopping server can end them at once.
#pragma once

#include <mutex>
#include <unordered_set>

namespace ratelimitd::rls {

class QuotaStream;

/// Envoy holds its quota stream for as long as the server lets it: a server that stops ends
/// every stream with OK (Envoy reconnects, to another replica), rather than have gRPC's
/// shutdown wait out its grace and cancel them.
/// @par Thread Safety
/// All members may be called from any thread. end_all() ends each stream under the roster's
/// lock, so a stream leaving (QuotaStream::OnDone, before it is deleted) waits for it.
class StreamRoster {
public:
    /// Lists `stream`; false (not listed) once end_all() has run: the stream ends at once.
    bool enter(QuotaStream* stream);
    void leave(QuotaStream* stream);
    /// Ends every listed stream and every later one.
    void end_all();

private:
    std::mutex mutex_;
    std::unordered_set<QuotaStream*> streams_;
    bool ending_ = false;
};

}  // namespace ratelimitd::rls
