// Accepts connections and spreads them over the server threads, each with its own io_context.
#pragma once

#include "ratelimitd/http/router.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <list>
#include <string>
#include <vector>

namespace ratelimitd::http {

/// Per-connection limits (docs/api.md table, and deadlines on every wait).
struct ServerLimits {
    std::size_t max_header_bytes = 16 * 1024;  ///< larger header block -> 431
    std::size_t max_body_bytes = 16 * 1024;    ///< larger body -> 413
    /// Keep-alive wait for the next request. Longer than nginx's upstream keepalive_timeout
    /// (60 s), so nginx closes an idle upstream connection before we do and never reuses
    /// one we are closing.
    std::chrono::milliseconds idle_timeout{75'000};
    /// To read a whole request once its first byte has arrived (slow or half-sent requests),
    /// and for a new connection to send that first byte.
    std::chrono::milliseconds request_timeout{10'000};
    std::chrono::milliseconds write_timeout{10'000};
    /// Connections open at once over all lanes. One more is answered 503 and closed at once,
    /// so a flood of connections cannot take the descriptors the served ones need.
    std::size_t max_connections = 10'000;
    /// Requests served on one connection; the response to the last carries Connection: close.
    std::size_t max_requests_per_connection = 10'000;
    /// The endpoints this listener serves (their table paths); empty: every endpoint. ERL
    /// mode's debug and Prometheus listeners serve a few read-only ones.
    std::vector<std::string> routes;
};

/// One live connection, as its lane sees it. Touched only on the lane's thread.
struct SessionSlot {
    boost::asio::ip::tcp::socket* socket = nullptr;
    bool idle = true;  ///< waiting for a request (safe to close when draining)
    /// Holding a delayed answer (held_answer.hpp): a drain cuts the wait short.
    boost::asio::steady_timer* held = nullptr;
};

/// One server thread's share of the work: its io_context, its router and its sessions.
/// @par Thread Safety
/// `sessions` and `draining` are touched only on `ioc`'s thread; `live` from any thread.
struct Lane {
    Lane(boost::asio::io_context& ioc_, Router& router_, service::Metrics& metrics_)
        : ioc(ioc_), router(router_), metrics(metrics_) {}
    boost::asio::io_context& ioc;
    Router& router;
    service::Metrics& metrics;  ///< counts connections opened, closed and refused
    std::list<SessionSlot> sessions;
    bool draining = false;
    /// Connections handed to this lane and not closed yet. The acceptor counts one in before
    /// it spawns the session (so a burst of accepts cannot overshoot max_connections); the
    /// session counts it out when it ends.
    std::atomic<std::size_t> live{0};
};

/// Serves one connection until the client closes, a deadline passes, or the lane drains.
/// Runs on the lane's io_context. Never throws.
boost::asio::awaitable<void> run_session(boost::asio::ip::tcp::socket socket, Lane& lane,
                                         const ServerLimits& limits);

/// The listening socket. Accepts on `accept_ioc` and hands each connection to the next lane
/// (round-robin), where its session runs.
class Server {
public:
    /// Binds and listens; throws boost::system::system_error when the address is taken.
    Server(boost::asio::io_context& accept_ioc, const boost::asio::ip::tcp::endpoint& endpoint,
           std::vector<Lane*> lanes, ServerLimits limits);

    /// The bound address (the chosen port when the endpoint's port was 0).
    [[nodiscard]] boost::asio::ip::tcp::endpoint local_endpoint() const;

    /// Starts accepting (on accept_ioc).
    void start();

    /// Stops accepting; every lane closes its idle connections at once and ends each busy
    /// one after its response (sent with Connection: close). May be called from any thread.
    void drain();

    /// Sessions still open over all lanes. Thread-safe.
    [[nodiscard]] std::size_t live_sessions() const;

private:
    boost::asio::awaitable<void> accept_loop();
    /// Answers 503 too_many_connections and closes, without a session. Accept thread only.
    void refuse(boost::asio::ip::tcp::socket socket, Lane& lane);

    boost::asio::io_context& accept_ioc_;
    boost::asio::ip::tcp::acceptor acceptor_;
    std::vector<Lane*> lanes_;
    ServerLimits limits_;
    std::size_t next_lane_ = 0;
    std::string refusal_;  // the 503 a connection over max_connections gets, rendered once
    // Refusals since the last warning, and when that was: one log line per burst, not per
    // connection (accept thread only).
    std::size_t refused_unlogged_ = 0;
    std::chrono::steady_clock::time_point refusal_logged_{};
};

}  // namespace ratelimitd::http
