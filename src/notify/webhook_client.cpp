// post_event: Beast's tcp_stream with one expiry for the whole attempt.
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

}  // namespace

net::awaitable<result<unsigned>> post_event(const policy::NotifyTarget& target, std::string body,
                                            std::string signature) {
    auto ex = co_await net::this_coro::executor;
    net::ip::tcp::resolver resolver(ex);
    beast::tcp_stream stream(ex);
    stream.expires_after(target.timeout);
    auto [resolve_ec, endpoints] = co_await resolver.async_resolve(target.host, target.port, use_tuple);
    if (resolve_ec) co_return failed(target, "resolve", resolve_ec);
    auto [connect_ec, endpoint] = co_await stream.async_connect(endpoints, use_tuple);
    if (connect_ec) co_return failed(target, "connect", connect_ec);

    http::request<http::string_body> req{http::verb::post, target.target, 11};
    req.set(http::field::host, host_header(target));
    req.set(http::field::user_agent, "ratelimitd");
    req.set(http::field::content_type, "application/json");
    req.set(signature_header_name, signature);
    req.body() = std::move(body);
    req.prepare_payload();
    auto [write_ec, written] = co_await http::async_write(stream, req, use_tuple);
    if (write_ec) co_return failed(target, "send", write_ec);

    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(max_answer_bytes);
    auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, use_tuple);
    if (read_ec) co_return failed(target, "reading the answer", read_ec);
    boost::system::error_code ignored;
    stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    co_return parser.get().result_int();
}

}  // namespace ratelimitd::notify
