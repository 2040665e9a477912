// wait_out_hold: a steady_timer the drain can cancel.
#include "ratelimitd/http/held_answer.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace ratelimitd::http {

namespace net = boost::asio;

net::awaitable<void> wait_out_hold(Answer& res, SessionSlot& slot, const Lane& lane) {
    if (!lane.draining) {
        net::steady_timer timer(co_await net::this_coro::executor);
        timer.expires_after(res.hold());
        slot.held = &timer;
        co_await timer.async_wait(net::as_tuple(net::use_awaitable));
        slot.held = nullptr;
    }
    res.end_hold();
}

}  // namespace ratelimitd::http
