// One connection's deadline, re-armed by storing a time: a watcher coroutine closes the
// socket when it passes. Beast's tcp_stream instead arms and cancels a timer around every
// read and write (a timer-queue insert and removal, under the scheduler's lock, each time).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <memory>

namespace ratelimitd::http {

/// Closes `socket` once the time last given to expires_after() has passed, as
/// beast::tcp_stream does on a timeout (a pending read or write then completes with
/// operation_aborted, and later ones fail). The watcher sleeps at most `longest_nap` at a
/// time, so moving the deadline to at least that far ahead (every deadline a session sets,
/// when longest_nap is the shortest of them) is a store (and a clock read, expires_after): the timer is
/// touched once per nap, not per request. A deadline sooner than the watcher's next wake-up
/// (the linger after an error answer) re-arms the timer.
/// @par Thread Safety
/// One thread: the socket's executor. The socket must outlive this object.
class Deadline {
public:
    using clock = std::chrono::steady_clock;

    Deadline(boost::asio::ip::tcp::socket& socket, clock::duration longest_nap);
    /// Stops watching; the watcher ends on its next turn without touching the socket.
    ~Deadline();
    Deadline(const Deadline&) = delete;
    Deadline& operator=(const Deadline&) = delete;

    /// The deadline is `d` from now: a clock read.
    void expires_after(clock::duration d) noexcept;
    /// The deadline is `at` (an instant the caller read, or one it reads anyway): no clock read.
    void expires_at(clock::time_point at) noexcept;
    /// True once the watcher has closed the socket.
    [[nodiscard]] bool expired() const noexcept;

private:
    struct State;
    /// Closes the socket when the deadline passes; ends early once the owner is gone.
    static boost::asio::awaitable<void> watch(std::shared_ptr<State> s);

    std::shared_ptr<State> state_;  // shared with the watcher, which may run after we are gone
};

}  // namespace ratelimitd::http
