// SignalHandler: SIGHUP reloads; SIGTERM/SIGINT drain, then stop the accept loop.
#include "ratelimitd/app/signals.hpp"

#include <spdlog/spdlog.h>

#include <csignal>

namespace ratelimitd::app {

SignalHandler::SignalHandler(boost::asio::io_context& main, http::Server& server, std::function<void()> reload)
    : main_(main), server_(server), reload_(std::move(reload)), signals_(main, SIGINT, SIGTERM, SIGHUP),
      drain_timer_(main) {}

SignalHandler::~SignalHandler() {
    // Asio gives a signal back its default action when its last set lets it go: let go here,
    // then ignored, so signals_'s own destruction finds nothing to give back.
    boost::system::error_code ignored;
    signals_.clear(ignored);
    for (const int signal : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal, SIG_IGN);
}

void SignalHandler::start() {
    signals_.async_wait([this](boost::system::error_code ec, int signal) { on_signal(ec, signal); });
}

void SignalHandler::on_signal(boost::system::error_code ec, int signal) {
    if (ec) return;
    if (signal == SIGHUP) {
        reload_();
    } else if (!draining_) {
        draining_ = true;
        spdlog::info("received {}: draining connections", signal == SIGTERM ? "SIGTERM" : "SIGINT");
        drain_started_ = std::chrono::steady_clock::now();
        server_.drain();
        poll_drain();
    }
    start();
}

void SignalHandler::poll_drain() {
    if (server_.live_sessions() == 0 || std::chrono::steady_clock::now() - drain_started_ > drain_deadline) {
        main_.stop();
        return;
    }
    drain_timer_.expires_after(std::chrono::milliseconds(10));
    drain_timer_.async_wait([this](boost::system::error_code) { poll_drain(); });
}

}  // namespace ratelimitd::app
