// OTLP/HTTP: POST <target> with Content-Type application/x-protobuf, one connection per batch
// (a batch every schedule delay at most: keeping one open buys little), on a private io_context
// run until the exchange ends or the deadline passes. https verifies the collector's certificate
// against the system's trust store and its name.
#include "ratelimitd/otlp/transport.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/ssl.h>

#include <optional>

namespace ratelimitd::otlp {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;

// The collector asks for a retry with these (OTLP/HTTP spec, "Retryable response codes").
bool retryable(unsigned status) { return status == 429 || status == 502 || status == 503 || status == 504; }

class HttpTransport final : public Transport {
public:
    explicit HttpTransport(const ExporterTarget& target) : target_(target), tls_(net::ssl::context::tls_client) {
        tls_.set_default_verify_paths();
        tls_.set_verify_mode(net::ssl::verify_peer);
    }

    bool send(const Request& request, std::chrono::steady_clock::time_point deadline, bool& permanent) override {
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) return false;
        net::io_context ioc;
        buffer_.clear();
        bhttp::request<bhttp::string_body> req{bhttp::verb::post, target_.target, 11};
        req.set(bhttp::field::host, target_.host);
        req.set(bhttp::field::content_type, "application/x-protobuf");
        req.set(bhttp::field::user_agent, "ratelimitd");
        for (const auto& [key, value] : target_.headers) req.set(key, value);
        req.body() = request.SerializeAsString();
        req.prepare_payload();
        unsigned status = 0;
        beast::error_code ec = target_.tls ? exchange_tls(ioc, req, left, status) : exchange_plain(ioc, req, left, status);
        if (ec) return false;
        if (status >= 200 && status < 300) return true;
        permanent = !retryable(status);
        return false;
    }

private:
    beast::error_code exchange_plain(net::io_context& ioc, const bhttp::request<bhttp::string_body>& req,
                                     std::chrono::steady_clock::duration left, unsigned& status) {
        beast::error_code ec;
        beast::tcp_stream stream(ioc);
        tcp::resolver resolver(ioc);
        // The whole exchange is asynchronous under one deadline, so a silent collector costs
        // the export thread the timeout, no more.
        stream.expires_after(left);
        resolver.async_resolve(target_.host, target_.port, [&](beast::error_code e, tcp::resolver::results_type r) {
            if (e) return void(ec = e);
            stream.async_connect(r, [&](beast::error_code ce, const tcp::endpoint&) {
                if (ce) return void(ec = ce);
                bhttp::async_write(stream, req, [&](beast::error_code we, std::size_t) {
                    if (we) return void(ec = we);
                    async_read_answer(stream, status, ec);
                });
            });
        });
        ioc.run();
        return ec;
    }

    beast::error_code exchange_tls(net::io_context& ioc, const bhttp::request<bhttp::string_body>& req,
                                   std::chrono::steady_clock::duration left, unsigned& status) {
        beast::error_code ec;
        beast::ssl_stream<beast::tcp_stream> stream(ioc, tls_);
        if (!SSL_set_tlsext_host_name(stream.native_handle(), target_.host.c_str())) {
            return beast::error_code(net::error::invalid_argument);
        }
        stream.set_verify_callback(net::ssl::host_name_verification(target_.host));
        tcp::resolver resolver(ioc);
        beast::get_lowest_layer(stream).expires_after(left);
        resolver.async_resolve(target_.host, target_.port, [&](beast::error_code e, tcp::resolver::results_type r) {
            if (e) return void(ec = e);
            beast::get_lowest_layer(stream).async_connect(r, [&](beast::error_code ce, const tcp::endpoint&) {
                if (ce) return void(ec = ce);
                stream.async_handshake(net::ssl::stream_base::client, [&](beast::error_code he) {
                    if (he) return void(ec = he);
                    bhttp::async_write(stream, req, [&](beast::error_code we, std::size_t) {
                        if (we) return void(ec = we);
                        async_read_answer(stream, status, ec);
                    });
                });
            });
        });
        ioc.run();
        return ec;
    }

    template <class Stream>
    void async_read_answer(Stream& stream, unsigned& status, beast::error_code& ec) {
        parser_.emplace();
        parser_->body_limit(64 * 1024);  // a partial_success message, not a document
        bhttp::async_read(stream, buffer_, *parser_, [&](beast::error_code re, std::size_t) {
            if (re) return void(ec = re);
            status = parser_->get().result_int();
        });
    }

    const ExporterTarget target_;
    net::ssl::context tls_;
    beast::flat_buffer buffer_;
    std::optional<bhttp::response_parser<bhttp::string_body>> parser_;
};

}  // namespace

std::unique_ptr<Transport> make_http_transport(const ExporterTarget& target) {
    return std::make_unique<HttpTransport>(target);
}

}  // namespace ratelimitd::otlp
