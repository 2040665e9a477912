// Server: the acceptor, round-robin hand-off to lanes, and drain on shutdown.
#include "ratelimitd/http/server.hpp"

#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/response_buffer.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <array>

namespace ratelimitd::http {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

namespace {

// At most one warning per this long while connections are being refused.
constexpr std::chrono::seconds refusal_log_interval{10};

// The refusal as sent on the wire: the same JSON error as every other, Connection: close.
std::string render_refusal(std::size_t max_connections) {
    Response res = make_error_response(
        Problem{errc::too_many_connections,
                "connections: " + std::to_string(max_connections) + " open already (max_connections)"},
        11, false);
    res.set(bhttp::field::retry_after, "1");
    std::string out;
    render_response(res, out);
    return out;
}

}  // namespace

Server::Server(net::io_context& accept_ioc, const tcp::endpoint& endpoint, std::vector<Lane*> lanes,
               ServerLimits limits)
    : accept_ioc_(accept_ioc),
      acceptor_(accept_ioc),
      lanes_(std::move(lanes)),
      limits_(limits),
      refusal_(render_refusal(limits.max_connections)) {
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(net::socket_base::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(net::socket_base::max_listen_connections);
}

tcp::endpoint Server::local_endpoint() const { return acceptor_.local_endpoint(); }

void Server::start() {
    net::co_spawn(accept_ioc_, accept_loop(), [](std::exception_ptr e) {
        if (!e) return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& ex) {
            spdlog::error("accept loop ended: {}", ex.what());
        }
    });
}

net::awaitable<void> Server::accept_loop() {
    for (;;) {
        Lane& lane = *lanes_[next_lane_];
        next_lane_ = (next_lane_ + 1) % lanes_.size();
        // The new socket belongs to the lane's io_context, so its session runs there.
        auto [ec, socket] = co_await acceptor_.async_accept(lane.ioc, net::as_tuple(net::use_awaitable));
        if (ec == net::error::operation_aborted || !acceptor_.is_open()) co_return;
        if (ec) {
            // Out of descriptors or the like: log, pause briefly, keep serving.
            spdlog::warn("accept failed: {}", ec.message());
            net::steady_timer pause(accept_ioc_, std::chrono::milliseconds(50));
            co_await pause.async_wait(net::as_tuple(net::use_awaitable));
            continue;
        }
        if (live_sessions() >= limits_.max_connections) {
            refuse(std::move(socket), lane);
            continue;
        }
        lane.live.fetch_add(1);  // counted out by the session when it ends
        socket.set_option(tcp::no_delay(true), ec);
        net::co_spawn(lane.ioc, run_session(std::move(socket), lane, limits_),
                      [](std::exception_ptr e) {
                          if (!e) return;
                          try {
                              std::rethrow_exception(e);
                          } catch (const std::exception& ex) {
                              spdlog::error("session ended by an exception: {}", ex.what());
                          }
                      });
    }
}

void Server::refuse(tcp::socket socket, Lane& lane) {
    // Counted before the client can read its 503: counted after, a client that reads the
    // refusal and then asks /metrics could find it missing while this thread waits for a CPU.
    lane.metrics.count_connection_rejected();
    boost::system::error_code ec;
    // A fresh socket's send buffer has room for a few hundred bytes: write without waiting,
    // so a refusal costs a few system calls and no session.
    socket.non_blocking(true, ec);
    socket.write_some(net::buffer(refusal_), ec);
    socket.shutdown(tcp::socket::shutdown_send, ec);
    // Read what the client has sent already: closing with unread data resets the connection,
    // and the client could lose the 503 before reading it.
    std::array<char, 4096> sink;
    for (int i = 0; i < 4 && !ec; ++i) socket.read_some(net::buffer(sink), ec);
    socket.close(ec);

    ++refused_unlogged_;
    const auto now = std::chrono::steady_clock::now();
    if (now - refusal_logged_ >= refusal_log_interval) {
        spdlog::warn("connection limit reached: connections refused since the last such line refused={} "
                     "max_connections={}", refused_unlogged_, limits_.max_connections);
        refused_unlogged_ = 0;
        refusal_logged_ = now;
    }
}

void Server::drain() {
    net::post(accept_ioc_, [this] {
        boost::system::error_code ignored;
        acceptor_.close(ignored);
    });
    for (Lane* lane : lanes_) {
        net::post(lane->ioc, [lane] {
            lane->draining = true;
            for (auto& slot : lane->sessions) {
                if (slot.idle && slot.socket != nullptr) {
                    boost::system::error_code ignored;
                    slot.socket->cancel(ignored);
                }
                if (slot.held != nullptr) slot.held->cancel();  // a held answer goes at once
            }
        });
    }
}

std::size_t Server::live_sessions() const {
    std::size_t n = 0;
    for (const Lane* lane : lanes_) n += lane->live.load();
    return n;
}

}  // namespace ratelimitd::http
