// The session's side of a held /v1/auth answer (auth_hold.hpp): the wait before it is sent.
#pragma once

#include "ratelimitd/http/answer.hpp"
#include "ratelimitd/http/server.hpp"

#include <boost/asio/awaitable.hpp>

namespace ratelimitd::http {

/// Waits out `res.hold()` on a timer (no thread is held), then frees its slot. The lane's
/// drain cancels the timer: at shutdown a held answer is sent at once (its reservation is
/// charged already; the request goes ahead early rather than not at all). A client that went
/// away meanwhile is found out by the send, after the wait: its reservation stands.
boost::asio::awaitable<void> wait_out_hold(Answer& res, SessionSlot& slot, const Lane& lane);

}  // namespace ratelimitd::http
