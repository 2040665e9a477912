// post_event: Beast's tcp_stream with one expiry for the whole attempt, over a kept connection
// when the pool has one; an https:// target over a TLS stream of its own, verified.
#include "ratelimitd/notify/webhook_client.hpp"

#include "ratelimitd/notify/signature.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <chrono>

namespace ratelimitd::notify {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;

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
    return t.port == (t.tls ? "443" : "80") ? host : host + ":" + t.port;
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

/// The client context of `t`: peers verified against its CA file, or the system's CAs.
result<std::shared_ptr<ssl::context>> tls_context(const policy::NotifyTarget& t) {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    boost::system::error_code ec;
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                         ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                     ec);
    if (!ec) ctx->set_verify_mode(ssl::verify_peer, ec);
    if (!ec) {
        if (t.ca_file.empty()) ctx->set_default_verify_paths(ec);
        else ctx->load_verify_file(t.ca_file, ec);
    }
    if (ec) return failed(t, "loading the CA certificates", ec);
    return ctx;
}

/// The host name (SNI, and the name the certificate must hold) or the IP address it must hold.
bool expect_peer(SSL* ssl, const std::string& host) {
    boost::system::error_code not_ip;
    (void)net::ip::make_address(host, not_ip);
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    if (!not_ip) return X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) == 1;
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return SSL_set_tlsext_host_name(ssl, host.c_str()) == 1 && X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0) == 1;
}

/// One request over a TLS connection of its own (kept connections are plain HTTP's only).
net::awaitable<result<unsigned>> post_tls(const policy::NotifyTarget& target, const http::request<http::string_body>& req,
                                          std::chrono::steady_clock::time_point deadline) {
    auto ctx = tls_context(target);
    if (!ctx) co_return ctx.error();
    auto ex = co_await net::this_coro::executor;
    net::ip::tcp::resolver resolver(ex);
    beast::ssl_stream<beast::tcp_stream> stream(ex, **ctx);
    if (!expect_peer(stream.native_handle(), target.host)) {
        co_return Problem{errc::store_unavailable, "webhook target " + target.name + " (" + target.url +
                                                       "): cannot verify the host name " + target.host};
    }
    beast::get_lowest_layer(stream).expires_at(deadline);
    auto [resolve_ec, endpoints] = co_await resolver.async_resolve(target.host, target.port, use_tuple);
    if (resolve_ec) co_return failed(target, "resolve", resolve_ec);
    auto [connect_ec, endpoint] = co_await beast::get_lowest_layer(stream).async_connect(endpoints, use_tuple);
    if (connect_ec) co_return failed(target, "connect", connect_ec);
    auto [handshake_ec] = co_await stream.async_handshake(ssl::stream_base::client, use_tuple);
    if (handshake_ec) co_return failed(target, "TLS handshake", handshake_ec);
    auto [write_ec, written] = co_await http::async_write(stream, req, use_tuple);
    if (write_ec) co_return failed(target, "send", write_ec);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(max_answer_bytes);
    auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, use_tuple);
    if (read_ec) co_return failed(target, "reading the answer", read_ec);
    // No close_notify exchange: the answer is in, and waiting for the peer's would only cost time.
    boost::system::error_code ignored;
    beast::get_lowest_layer(stream).socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    co_return parser.get().result_int();
}

}  // namespace

net::awaitable<result<unsigned>> post_event(const policy::NotifyTarget& target, std::string body,
                                            std::string signature, ConnectionPool* pool) {
    http::request<http::string_body> req{http::verb::post, target.target, 11};
    req.set(http::field::host, host_header(target));
    req.set(http::field::user_agent, "ratelimitd");
    req.set(http::field::content_type, "application/json");
    req.set(signature_header_name, signature);
    req.keep_alive(pool != nullptr && !target.tls);
    req.body() = std::move(body);
    req.prepare_payload();
    const auto deadline = std::chrono::steady_clock::now() + target.timeout;  // the whole attempt
    if (target.tls) co_return co_await post_tls(target, req, deadline);
    const std::string address = target.host + ":" + target.port;

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
