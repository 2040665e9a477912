// post_event: Beast's tcp_stream with one expiry for the whole attempt, over a kept connection
// when the pool has one.
#include "ratelimitd/notify/webhook_client.hpp"

#include "ratelimitd/notify/signature.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <chrono>

namespace ratelimitd::notify {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr std::size_t max_answer_bytes = 64 * 1024;

Problem failed(const policy::NotifyTarget& t, std::string_view step, const boost::system::error_code& ec) {
    const std::string why = ec == beast::error::timeout ? "no answer within " + std::to_string(t.timeout.count()) + "ms"
                                                        : ec.message();
    return Problem{errc::store_unavailable, "webhook target " + t.name + " (" + t.url + "): " + std::string(step) +
                                                " failed: " + why};
}

std::string host_header(const policy::NotifyTarget& t) {
    const std::string host = t.host.find(':') != std::string::npos ? "[" + t.host + "]" : t.host;
    return t.port == "80" ? host : host + ":" + t.port;
}

/// What one request on one connection came to: the status, or why not; `unused` when the
/// connection failed before the receiver answered a byte (a kept connection it had closed).
struct Exchange {
    result<unsigned> status = Problem{errc::store_unavailable, ""};
    bool unused = false;
};

/// Sends `req` on `stream` and reads the answer; gives the connection back to `pool` when both
/// sides keep it open.
net::awaitable<Exchange> exchange(beast::tcp_stream stream, const http::request<http::string_body>& req,
                                  std::chrono::steady_clock::time_point deadline, const policy::NotifyTarget& target,
                                  ConnectionPool* pool, const std::string& address) {
    stream.expires_at(deadline);
    auto [write_ec, written] = co_await http::async_write(stream, req, use_tuple);
    if (write_ec) co_return Exchange{failed(target, "send", write_ec), true};

    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(max_answer_bytes);
    auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, use_tuple);
    if (read_ec) {
        const bool unused = read == 0 && (read_ec == http::error::end_of_stream || read_ec == net::error::eof ||
                                          read_ec == net::error::connection_reset);
        co_return Exchange{failed(target, "reading the answer", read_ec), unused};
    }
    const unsigned status = parser.get().result_int();
    if (pool != nullptr && parser.keep_alive() && req.keep_alive()) {
        stream.expires_never();
        pool->give_back(address, std::move(stream));
    } else {
        boost::system::error_code ignored;
        stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    }
    co_return Exchange{status, false};
}

}  // namespace

net::awaitable<result<unsigned>> post_event(const policy::NotifyTarget& target, std::string body,
                                            std::string signature, ConnectionPool* pool) {
    http::request<http::string_body> req{http::verb::post, target.target, 11};
    req.set(http::field::host, host_header(target));
    req.set(http::field::user_agent, "ratelimitd");
    req.set(http::field::content_type, "application/json");
    req.set(signature_header_name, signature);
    req.keep_alive(pool != nullptr);
    req.body() = std::move(body);
    req.prepare_payload();
    const std::string address = target.host + ":" + target.port;
    const auto deadline = std::chrono::steady_clock::now() + target.timeout;  // the whole attempt

    if (pool != nullptr) {
        if (auto kept = pool->take(address)) {
            Exchange kept_try = co_await exchange(std::move(*kept), req, deadline, target, pool, address);
            // A kept connection the receiver closed while it was idle: once more on a new one.
            if (!kept_try.unused) co_return kept_try.status;
        }
    }
    auto ex = co_await net::this_coro::executor;
    net::ip::tcp::resolver resolver(ex);
    beast::tcp_stream stream(ex);
    stream.expires_at(deadline);
    auto [resolve_ec, endpoints] = co_await resolver.async_resolve(target.host, target.port, use_tuple);
    if (resolve_ec) co_return failed(target, "resolve", resolve_ec);
    auto [connect_ec, endpoint] = co_await stream.async_connect(endpoints, use_tuple);
    if (connect_ec) co_return failed(target, "connect", connect_ec);
    Exchange fresh = co_await exchange(std::move(stream), req, deadline, target, pool, address);
    co_return fresh.status;
}

}  // namespace ratelimitd::notify
