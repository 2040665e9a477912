// The responses of one ADS stream between the thread that reads them and the one that applies
// them: a response that arrives while another is being applied waits, and a newer one replaces
// it (state of the world: the newest holds everything; the one it replaces is never applied).
#pragma once

#include <envoy/service/discovery/v3/discovery.pb.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace ratelimitd::xds {

/// A response and when it was read off the stream (the apply time counts from there).
struct ReceivedResponse {
    envoy::service::discovery::v3::DiscoveryResponse response;
    std::chrono::steady_clock::time_point received;
};

/// A response that arrives while none is being applied starts at once; one that arrives while
/// one is applied waits, and is replaced (dropped, never answered) by a newer one.
/// @par Thread Safety
/// put() and close() from the reading thread, take() and done() from the applying one.
class ResponseQueue {
public:
    /// A response read; returns the version it superseded (a waiting one, now dropped), if any.
    std::optional<std::string> put(ReceivedResponse received);
    /// The stream ended: take() returns nothing from now on (nothing left is answered on it).
    void close();
    /// Waits for the next response to apply; nothing once closed.
    std::optional<ReceivedResponse> take();
    /// The response taken has been answered: the one waiting, if any, starts.
    void done();

private:
    std::mutex mu_;
    std::condition_variable ready_;
    std::optional<ReceivedResponse> next_;     // to start now
    std::optional<ReceivedResponse> waiting_;  // arrived while one was applied
    bool applying_ = false;                    // from a start until done()
    bool closed_ = false;
};

}  // namespace ratelimitd::xds
