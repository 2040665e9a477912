// run_session: one connection's read -> route -> write loop, with a deadline on every wait.
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/deadline.hpp"
#include "ratelimitd/http/header_block.hpp"
#include "ratelimitd/http/held_answer.hpp"
#include "ratelimitd/http/response_buffer.hpp"
#include "ratelimitd/http/server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>

namespace ratelimitd::http {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

// Reads a Request: its fields come from the same recycling allocator.
using RequestParser = bhttp::request_parser<Body, FieldAllocator<char>>;

/// Registers the session in its lane for drain, and unregisters it on every exit path.
class SlotGuard {
public:
    // The acceptor has counted this connection into lane.live already.
    SlotGuard(Lane& lane, tcp::socket& socket) : lane_(lane) {
        slot_ = lane_.sessions.insert(lane_.sessions.end(), SessionSlot{&socket, true});
        lane_.metrics.connection_opened();
    }
    ~SlotGuard() {
        lane_.sessions.erase(slot_);
        lane_.live.fetch_sub(1);
        lane_.metrics.connection_closed();
    }
    SlotGuard(const SlotGuard&) = delete;
    SlotGuard& operator=(const SlotGuard&) = delete;
    SessionSlot& slot() { return *slot_; }

private:
    Lane& lane_;
    std::list<SessionSlot>::iterator slot_;
};

/// A configured size as the error sentences show it: "16 KiB", or "1000 bytes".
std::string size_text(std::size_t bytes) {
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
    return std::to_string(bytes) + " bytes";
}

/// The answer to a request that could not be read; nullopt when the connection should
/// just close (timeout, reset, client gone).
std::optional<Response> answer_for_read_error(const beast::error_code& ec, const ServerLimits& limits) {
    if (ec == bhttp::error::header_limit) {
        return make_error_response(
            Problem{errc::header_too_large,
                    "headers: the header block is over " + size_text(limits.max_header_bytes)},
            11, false);
    }
    if (ec == bhttp::error::body_limit) {
        return make_error_response(
            Problem{errc::payload_too_large, "body: larger than " + size_text(limits.max_body_bytes)}, 11, false);
    }
    // Other HTTP parse errors (bad syntax): the client sent something that is not HTTP/1.1.
    if (ec.category() == beast::error_code(bhttp::error::bad_method).category()) {
        if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message) return std::nullopt;
        return make_error_response(
            Problem{errc::invalid_request, "request: malformed HTTP (" + ec.message() + ")"}, 11, false);
    }
    return std::nullopt;  // socket errors and timeouts
}

/// Renders `res` into the session's `wire` buffer and sends it: first with one plain
/// non-blocking send (the socket almost always has room for a check's few hundred bytes, and
/// then no completion goes through the scheduler), and what did not fit with async_write.
/// Only that wait needs a deadline: `deadline`, when given, is moved to `write_timeout` from
/// then, so an answer sent whole costs no clock read (the deadline in force until then is the
/// request's, as it was while the answer was decided). Without `deadline` (100 Continue) the
/// deadline in force stays. `sent_at`, when given and the answer had to wait, becomes the
/// time it was all sent (a clock read on that road only).
net::awaitable<beast::error_code> write_answer(tcp::socket& socket, const Answer& res, std::string& wire,
                                               Deadline* deadline = nullptr,
                                               std::chrono::milliseconds write_timeout = {},
                                               Deadline::clock::time_point* sent_at = nullptr) {
    // An answer far larger than a check's (a big /metrics page) is not kept for the rest of
    // the connection.
    constexpr std::size_t kept_capacity = 64 * 1024;
    wire.clear();
    res.render(wire);
    beast::error_code ec;
    const std::size_t sent = socket.write_some(net::buffer(wire), ec);
    if (ec == net::error::would_block || ec == net::error::try_again) ec = {};
    if (!ec && sent < wire.size()) {
        if (deadline != nullptr) deadline->expires_after(write_timeout);
        auto [wec, n] = co_await net::async_write(socket, net::buffer(wire) + sent, use_tuple);
        ec = wec;
        if (sent_at != nullptr) *sent_at = Deadline::clock::now();
    }
    if (wire.capacity() > kept_capacity) std::string().swap(wire);
    co_return ec;
}

std::string_view readable(const beast::flat_buffer& buffer) {
    return {static_cast<const char*>(buffer.data().data()), buffer.size()};
}

/// Reads until the buffer holds the whole header block of the next request (or a bare LF:
/// the parser then refuses it), and neutralises there what the parser would refuse in a
/// header ratelimitd does not read (see sanitize_header_block), so a proxy's subrequest is
/// never refused for a byte the client put in it. A block over `header_limit` (request line
/// included) is header_limit: 431, as docs/api.md says.
net::awaitable<beast::error_code> read_header_block(tcp::socket& stream, beast::flat_buffer& buffer,
                                                    std::size_t header_limit, bool& waited) {
    auto scan = scan_header_block(readable(buffer));
    while (scan.state == HeaderScan::State::incomplete) {
        // The limit is on the whole block (Beast's own counts only the unparsed rest).
        if (buffer.size() > header_limit) co_return bhttp::error::header_limit;
        waited = true;
        auto [ec, n] = co_await stream.async_read_some(buffer.prepare(4096), use_tuple);
        if (ec) co_return ec;
        buffer.commit(n);
        scan = scan_header_block(readable(buffer), scan);
    }
    if (scan.state == HeaderScan::State::complete && scan.end > header_limit) co_return bhttp::error::header_limit;
    // A clean block (the scan judged its field lines as it went) goes to the parser as it is.
    if (scan.state != HeaderScan::State::complete || scan.clean) co_return beast::error_code{};
    auto clean = sanitize_header_block(readable(buffer).substr(0, scan.end));
    if (!clean) co_return beast::error_code{};
    clean->append(readable(buffer).substr(scan.end));  // the body, or pipelined requests
    buffer.consume(buffer.size());
    std::memcpy(buffer.prepare(clean->size()).data(), clean->data(), clean->size());
    buffer.commit(clean->size());
    co_return beast::error_code{};
}

/// Feeds `parser` what `buffer` holds and consumes what it used: up to the end of the header
/// on the first call (the parser stops there, so Expect can be answered before the body), the
/// body's bytes on the next. "Needs more" is not an error: the caller reads on.
beast::error_code parse_buffered(RequestParser& parser, beast::flat_buffer& buffer) {
    if (buffer.size() == 0) return {};
    beast::error_code ec;
    const std::size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == bhttp::error::need_more) return {};
    return ec;
}

/// After an error answer to a request that was not read to its end (431, 413, 400): stop
/// sending, then read and drop what the peer still sends until it closes (at most
/// linger_time / linger_bytes). Closing with unread bytes would reset the connection, and a
/// reset can reach the peer before it has read the answer: nginx then sees no answer (502),
/// which a fail-open config would let through.
net::awaitable<void> linger(tcp::socket& stream, Deadline& deadline) {
    constexpr std::chrono::seconds linger_time{1};
    constexpr std::size_t linger_bytes = 1 << 20;
    beast::error_code ignored;
    stream.shutdown(tcp::socket::shutdown_send, ignored);
    deadline.expires_after(linger_time);
    std::array<char, 4096> sink{};
    for (std::size_t total = 0; total < linger_bytes;) {
        auto [ec, n] = co_await stream.async_read_some(net::buffer(sink), use_tuple);
        if (ec) break;
        total += n;
    }
}

/// Reads the rest of one request (its first bytes are in `buffer`) into `parser`, under the
/// deadline the caller set (request_timeout: slow or half-sent requests cannot hold the
/// connection). `waited` becomes true when any of it had to be waited for: the request was
/// not whole when its first bytes were in.
net::awaitable<beast::error_code> read_request(tcp::socket& stream, beast::flat_buffer& buffer, RequestParser& parser,
                                               const ServerLimits& limits, std::string& wire, bool& waited) {
    if (auto ec = co_await read_header_block(stream, buffer, limits.max_header_bytes, waited)) co_return ec;
    parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
    parser.body_limit(limits.max_body_bytes);
    // The header block is in the buffer: parse it here rather than through an Asio read,
    // which would complete through the scheduler. Only what is still missing is awaited.
    if (auto ec = parse_buffered(parser, buffer)) co_return ec;
    if (parser.is_done()) co_return beast::error_code{};
    if (!parser.is_header_done()) {
        waited = true;
        auto [ec, n] = co_await bhttp::async_read_header(stream, buffer, parser, use_tuple);
        if (ec) co_return ec;
    }
    if (parser.is_done()) co_return beast::error_code{};
    // curl and others wait (about 1 s) for this before sending a body. RFC 9110 §10.1.1: the
    // expectation is case-insensitive.
    if (beast::iequals(parser.get()[bhttp::field::expect], "100-continue")) {
        const Response cont{bhttp::status::continue_, parser.get().version()};
        if (auto wec = co_await write_answer(stream, cont, wire)) co_return wec;
    }
    if (auto ec = parse_buffered(parser, buffer)) co_return ec;
    if (parser.is_done()) co_return beast::error_code{};
    waited = true;
    auto [bec, bn] = co_await bhttp::async_read(stream, buffer, parser, use_tuple);
    co_return bec;
}

/// What every request of a connection shares: the peer address (/v1/auth believes proxy
/// headers only from trusted peers) and the routes. The socket is made non-blocking: answers
/// are sent first with a plain send that must not block (write_answer).
RequestContext connection_context(tcp::socket& socket, const ServerLimits& limits) {
    RequestContext ctx;
    if (!limits.routes.empty()) ctx.routes = &limits.routes;
    beast::error_code ec;
    const auto peer = socket.remote_endpoint(ec);
    if (!ec) ctx.peer = peer.address().to_string();
    beast::error_code ignored;
    socket.non_blocking(true, ignored);
    return ctx;
}

/// Connection: close while shutting down, and on the last request a connection may carry
/// (`served` counts this one), so no client stays pinned to one thread forever and a proxy
/// reconnects.
void close_when_due(Answer& res, const Lane& lane, std::size_t served, const ServerLimits& limits) {
    if (lane.draining || served >= limits.max_requests_per_connection) res.keep_alive(false);
}

/// A request that could not be read ends its connection: with its error answer when it has one
/// (then the client's unread bytes are lingered on, so the answer is not lost to a reset), a
/// debug line for anything but the client's own close. Off the path of a request that parses.
net::awaitable<void> end_on_read_error(tcp::socket& socket, beast::error_code ec, const ServerLimits& limits,
                                       std::string& wire, Deadline& deadline) {
    if (auto res = answer_for_read_error(ec, limits)) {
        if (!co_await write_answer(socket, *res, wire, &deadline, limits.write_timeout)) co_await linger(socket, deadline);
    } else if (ec != bhttp::error::end_of_stream && ec != net::error::eof) {
        spdlog::debug("session: read ended: {}", ec.message());
    }
}

/// Holds a delayed answer out; a held answer is not a slow request: the deadline waits for
/// the hold too.
net::awaitable<void> hold_answer(Answer& res, Deadline& deadline, const ServerLimits& limits, SessionSlot& slot,
                                 const Lane& lane) {
    deadline.expires_after(res.hold() + limits.request_timeout);
    co_await wait_out_hold(res, slot, lane);
}

/// The shortest deadline a session sets per request: its deadline watcher wakes that often.
std::chrono::milliseconds shortest_deadline(const ServerLimits& limits) {
    return std::min({limits.idle_timeout, limits.request_timeout, limits.write_timeout});
}

}  // namespace

net::awaitable<void> run_session(tcp::socket socket, Lane& lane, const ServerLimits& limits) {
    SlotGuard guard(lane, socket);
    Deadline deadline(socket, shortest_deadline(limits));
    beast::flat_buffer buffer;  // requests are read into it, for the whole connection
    std::string wire;           // answers are rendered into it, for the whole connection
    RequestContext ctx = connection_context(socket, limits);

    std::size_t served = 0;
    // Where the next wait for a request counts from: the connection's start, then each answer.
    Deadline::clock::time_point idle_from = Deadline::clock::now();
    while (!lane.draining) {
        // Wait for the first byte of the next request under the keep-alive deadline. Only
        // here is the session idle: a drain may close it without losing a request. A new
        // connection gets only request_timeout: its client opened it to send a request, and
        // one that sends nothing should not hold a slot for the whole keep-alive time.
        guard.slot().idle = true;
        if (buffer.size() == 0) {
            deadline.expires_at(served == 0 ? idle_from + limits.request_timeout : idle_from + limits.idle_timeout);
            auto [ec, n] = co_await socket.async_read_some(buffer.prepare(4096), use_tuple);
            if (ec) break;
            buffer.commit(n);
        }
        guard.slot().idle = false;

        // The request's clock read: the whole request must arrive within request_timeout, and
        // (when it came whole in these first bytes, as it almost always does) the router times
        // its answer and decides a check from this instant.
        const auto first_bytes = Deadline::clock::now();
        deadline.expires_at(first_bytes + limits.request_timeout);
        RequestParser parser;
        bool waited = false;
        if (auto ec = co_await read_request(socket, buffer, parser, limits, wire, waited)) {
            co_await end_on_read_error(socket, ec, limits, wire, deadline);
            break;
        }
        ctx.arrived = waited ? Deadline::clock::now() : first_bytes;

        // Router::handle's steps, awaited in this frame: the request stays in the parser and
        // the answer is made here, with no router frame between (a frame and a resume less).
        const RoutedCall routed(parser.get(), ctx);
        std::optional<Answer> answered;
        try {
            answered.emplace(co_await lane.router.route(routed));
        } catch (const std::exception& e) {
            answered.emplace(lane.router.failed(routed, e));
        }
        Answer& res = *answered;
        lane.router.finish(res, routed);
        if (res.hold().count() > 0) co_await hold_answer(res, deadline, limits, guard.slot(), lane);
        close_when_due(res, lane, ++served, limits);
        const bool keep_alive = res.keep_alive();
        // The keep-alive idle time counts from the answer: when it was ready (the router's
        // reading), or all sent when the send had to wait.
        idle_from = res.ready_at() != Deadline::clock::time_point{} ? res.ready_at() : Deadline::clock::now();
        if (co_await write_answer(socket, res, wire, &deadline, limits.write_timeout, &idle_from) || !keep_alive) break;
    }

    beast::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_send, ignored);
}

}  // namespace ratelimitd::http
