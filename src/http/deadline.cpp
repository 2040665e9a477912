// Deadline: a lazily re-armed timer that closes the socket when its time passes.
#include "ratelimitd/http/deadline.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace ratelimitd::http {

namespace net = boost::asio;

struct Deadline::State {
    State(net::ip::tcp::socket& s, clock::duration nap_) : timer(s.get_executor()), socket(&s), nap(nap_) {}
    net::steady_timer timer;
    net::ip::tcp::socket* socket;  // valid while !stopped
    clock::duration nap;
    clock::time_point at = clock::time_point::max();    // when the socket is closed
    clock::time_point wake = clock::time_point::max();  // when the watcher looks next
    bool stopped = false;
    bool expired = false;
};

Deadline::Deadline(net::ip::tcp::socket& socket, clock::duration longest_nap)
    : state_(std::make_shared<State>(socket, std::max(longest_nap, clock::duration(std::chrono::milliseconds(1))))) {
    net::co_spawn(state_->timer.get_executor(), watch(state_), net::detached);
}

Deadline::~Deadline() {
    state_->stopped = true;
    state_->timer.cancel();
}

void Deadline::expires_after(clock::duration d) noexcept { expires_at(clock::now() + d); }

void Deadline::expires_at(clock::time_point at) noexcept {
    State& s = *state_;
    s.at = at;
    if (s.at < s.wake) s.timer.cancel();  // the watcher would look too late: wake it to re-plan
}

bool Deadline::expired() const noexcept { return state_->expired; }

net::awaitable<void> Deadline::watch(std::shared_ptr<State> s) {
    while (!s->stopped) {
        const auto now = clock::now();
        if (now >= s->at) {
            s->expired = true;
            boost::system::error_code ignored;
            s->socket->close(ignored);
            co_return;
        }
        s->wake = std::min(s->at, now + s->nap);
        s->timer.expires_at(s->wake);
        // Cancelled when the deadline moves sooner than `wake`, or when the owner is gone.
        co_await s->timer.async_wait(net::as_tuple(net::use_awaitable));
    }
}

}  // namespace ratelimitd::http
