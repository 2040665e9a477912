// run_session: one connection's read -> route -> write loop, with a deadline on every wait.
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <spdlog/spdlog.h>

#include <optional>

namespace ratelimitd::http {

namespace net = boost::asio;
namespace beast = boost::beast;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

/// Registers the session in its lane for drain, and unregisters it on every exit path.
class SlotGuard {
public:
    // The acceptor has counted this connection into lane.live already.
    SlotGuard(Lane& lane, beast::tcp_stream& stream) : lane_(lane) {
        slot_ = lane_.sessions.insert(lane_.sessions.end(), SessionSlot{&stream, true});
        lane_.router.metrics().connection_opened();
    }
    ~SlotGuard() {
        lane_.sessions.erase(slot_);
        lane_.live.fetch_sub(1);
        lane_.router.metrics().connection_closed();
    }
    SlotGuard(const SlotGuard&) = delete;
    SlotGuard& operator=(const SlotGuard&) = delete;
    SessionSlot& slot() { return *slot_; }

private:
    Lane& lane_;
    std::list<SessionSlot>::iterator slot_;
};

/// The answer to a request that could not be read; nullopt when the connection should
/// just close (timeout, reset, client gone).
std::optional<Response> answer_for_read_error(const beast::error_code& ec) {
    if (ec == bhttp::error::header_limit) {
        Response res{bhttp::status::request_header_fields_too_large, 11};
        res.set(bhttp::field::content_type, "application/json");
        res.body() = R"({"error":"header_too_large","detail":"headers: the header block is over 16 KiB"})";
        res.keep_alive(false);
        res.prepare_payload();
        return res;
    }
    if (ec == bhttp::error::body_limit) {
        return make_error_response(
            Problem{errc::payload_too_large, "body: larger than 16 KiB"}, 11, false);
    }
    // Other HTTP parse errors (bad syntax): the client sent something that is not HTTP/1.1.
    if (ec.category() == beast::error_code(bhttp::error::bad_method).category()) {
        if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message) return std::nullopt;
        return make_error_response(
            Problem{errc::invalid_request, "request: malformed HTTP (" + ec.message() + ")"}, 11, false);
    }
    return std::nullopt;  // socket errors and timeouts
}

}  // namespace

net::awaitable<void> run_session(beast::tcp_stream stream, Lane& lane, const ServerLimits& limits) {
    SlotGuard guard(lane, stream);
    beast::flat_buffer buffer;
    RequestContext ctx;  // the peer address: /v1/auth believes proxy headers only from trusted peers
    {
        beast::error_code ec;
        const auto peer = stream.socket().remote_endpoint(ec);
        if (!ec) ctx.peer = peer.address().to_string();
    }

    std::size_t served = 0;
    while (!lane.draining) {
        // Wait for the first byte of the next request under the keep-alive deadline. Only
        // here is the session idle: a drain may close it without losing a request. A new
        // connection gets only request_timeout: its client opened it to send a request, and
        // one that sends nothing should not hold a slot for the whole keep-alive time.
        guard.slot().idle = true;
        if (buffer.size() == 0) {
            stream.expires_after(served == 0 ? limits.request_timeout : limits.idle_timeout);
            auto [ec, n] = co_await stream.async_read_some(buffer.prepare(4096), use_tuple);
            if (ec) break;
            buffer.commit(n);
        }
        guard.slot().idle = false;

        // The whole request must then arrive within request_timeout (slow or half-sent
        // requests cannot hold the connection).
        bhttp::request_parser<bhttp::string_body> parser;
        parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
        parser.body_limit(limits.max_body_bytes);
        stream.expires_after(limits.request_timeout);
        auto [hec, hn] = co_await bhttp::async_read_header(stream, buffer, parser, use_tuple);
        beast::error_code ec = hec;
        if (!ec && parser.get()[bhttp::field::expect] == "100-continue" && !parser.is_done()) {
            // curl and others wait (about 1 s) for this before sending a body.
            bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, parser.get().version()};
            auto [wec, wn] = co_await bhttp::async_write(stream, cont, use_tuple);
            ec = wec;
        }
        if (!ec && !parser.is_done()) {
            auto [bec, bn] = co_await bhttp::async_read(stream, buffer, parser, use_tuple);
            ec = bec;
        }
        if (ec) {
            if (auto res = answer_for_read_error(ec)) {
                stream.expires_after(limits.write_timeout);
                co_await bhttp::async_write(stream, *res, use_tuple);
            } else if (ec != bhttp::error::end_of_stream) {
                spdlog::debug("session: read ended: {}", ec.message());
            }
            break;
        }

        Response res = co_await lane.router.handle(parser.release(), ctx);
        // Connection: close while shutting down, and on the last request a connection may
        // carry (so no client stays pinned to one thread forever, and a proxy reconnects).
        ++served;
        if (lane.draining || served >= limits.max_requests_per_connection) res.keep_alive(false);
        const bool keep_alive = res.keep_alive();
        stream.expires_after(limits.write_timeout);
        auto [wec, wn] = co_await bhttp::async_write(stream, res, use_tuple);
        if (wec || !keep_alive) break;
    }

    beast::error_code ignored;
    stream.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
}

}  // namespace ratelimitd::http
