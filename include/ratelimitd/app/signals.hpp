// What the process does on SIGHUP, SIGTERM and SIGINT.
#pragma once

#include "ratelimitd/http/server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>

namespace ratelimitd::app {

/// SIGTERM must end the process within 5 s (docs/configuration.md); this leaves room to exit.
inline constexpr std::chrono::milliseconds drain_deadline{4000};

/// On the accept thread's io_context: SIGHUP calls `reload`; the first SIGTERM or SIGINT
/// drains the server (requests in flight finish, keep-alive connections close) and stops
/// `main` once no session is left or at drain_deadline.
/// @par Thread Safety
/// Runs on `main`'s thread; `main` and `server` outlive it.
class SignalHandler {
public:
    SignalHandler(boost::asio::io_context& main, http::Server& server, std::function<void()> reload);
    /// Leaves SIGINT, SIGTERM and SIGHUP ignored, not at their default action: gone with the
    /// process's run, it is the last of it, and a signal sent while the process ends (systemd,
    /// a supervisor, an operator sending SIGTERM twice) must not turn a clean stop into a
    /// death by signal (exit 143).
    ~SignalHandler();
    SignalHandler(const SignalHandler&) = delete;
    SignalHandler& operator=(const SignalHandler&) = delete;

    /// Waits for the signals (again after each one).
    void start();

private:
    void on_signal(boost::system::error_code ec, int signal);
    void poll_drain();

    boost::asio::io_context& main_;
    http::Server& server_;
    std::function<void()> reload_;
    boost::asio::signal_set signals_;
    boost::asio::steady_timer drain_timer_;
    std::chrono::steady_clock::time_point drain_started_;
    bool draining_ = false;
};

}  // namespace ratelimitd::app
