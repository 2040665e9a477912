// OTLP/HTTP: POST <target> with Content-Type application/x-protobuf on one kept-alive connection
// (the collector's address resolved once, again only after a connect fails), on a private
// io_context run until the exchange ends or the deadline passes. The request's head is written
// once, at construction, but for its Content-Length; the body goes out as the encoder left it,
// in two buffers (the OTLP request head's bytes and the queue's chunk), never copied. A kept
// connection the collector closed while idle is replaced once within the same send. https
// verifies the collector's certificate against the system's trust store and its name.
#include "ratelimitd/otlp/transport.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/ssl.h>

#include <array>
#include <optional>

namespace ratelimitd::otlp {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;
using Stream = beast::ssl_stream<beast::tcp_stream>;

// The collector asks for a retry with these (OTLP/HTTP spec, "Retryable response codes").
bool retryable(unsigned status) { return status == 429 || status == 502 || status == 503 || status == 504; }

class HttpTransport final : public Transport {
public:
    explicit HttpTransport(const ExporterTarget& target) : target_(target), tls_(net::ssl::context::tls_client) {
        tls_.set_default_verify_paths();
        tls_.set_verify_mode(net::ssl::verify_peer);
        // The fields as Beast keeps them: a configured header of the same name replaces ours.
        bhttp::fields fields;
        fields.set(bhttp::field::host, target_.host);
        fields.set(bhttp::field::content_type, "application/x-protobuf");
        fields.set(bhttp::field::user_agent, "ratelimitd");
        for (const auto& [key, value] : target_.headers) fields.set(key, value);
        fields.erase(bhttp::field::content_length);
        fields.erase(bhttp::field::transfer_encoding);
        head_fields_ = "POST " + target_.target + " HTTP/1.1\r\n";
        for (const auto& field : fields) {
            head_fields_.append(field.name_string()).append(": ").append(field.value()).append("\r\n");
        }
        head_fields_ += "Content-Length: ";
    }

    bool send(std::string_view head, std::string_view spans, std::chrono::steady_clock::time_point deadline,
              bool& permanent) override {
        request_head_ = head_fields_;
        request_head_.append(std::to_string(head.size() + spans.size())).append("\r\n\r\n");
        body_ = {net::buffer(request_head_), net::buffer(head.data(), head.size()),
                 net::buffer(spans.data(), spans.size())};
        unsigned status = 0;
        const bool reused = stream_.has_value();
        beast::error_code ec = exchange(deadline, status);
        // A kept connection may have been closed by the collector since the last batch.
        if (ec && reused) ec = exchange(deadline, status);
        if (ec) return false;
        if (status >= 200 && status < 300) return true;
        permanent = !retryable(status);
        return false;
    }

private:
    // One request and its answer, connecting first when no connection is kept.
    beast::error_code exchange(std::chrono::steady_clock::time_point deadline, unsigned& status) {
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) return net::error::timed_out;
        beast::error_code ec;
        const bool fresh = !stream_.has_value();
        if (fresh) ec = open_stream();
        if (ec) return ec;
        beast::get_lowest_layer(*stream_).expires_after(left);
        const auto write_and_read = [&] {
            if (target_.tls) {
                net::async_write(*stream_, body_, [&](beast::error_code we, std::size_t) {
                    if (we) return void(ec = we);
                    read_answer(*stream_, status, ec);
                });
            } else {
                net::async_write(plain(), body_, [&](beast::error_code we, std::size_t) {
                    if (we) return void(ec = we);
                    read_answer(plain(), status, ec);
                });
            }
        };
        if (fresh) {
            connect(ec, write_and_read);
        } else {
            write_and_read();
        }
        ioc_.restart();
        ioc_.run();
        if (ec || !keep_alive_) drop_connection(ec && fresh);
        return ec;
    }

    beast::error_code open_stream() {
        stream_.emplace(ioc_, tls_);
        if (target_.tls && !SSL_set_tlsext_host_name(stream_->native_handle(), target_.host.c_str())) {
            stream_.reset();
            return net::error::invalid_argument;
        }
        if (target_.tls) stream_->set_verify_callback(net::ssl::host_name_verification(target_.host));
        return {};
    }

    // Resolves (once), connects, shakes hands when TLS, then runs `then`.
    template <class Then>
    void connect(beast::error_code& ec, Then then) {
        const auto on_connect = [&, then](beast::error_code ce, const tcp::endpoint&) {
            if (ce) return void(ec = ce);
            if (!target_.tls) return then();
            stream_->async_handshake(net::ssl::stream_base::client, [&, then](beast::error_code he) {
                if (he) return void(ec = he);
                then();
            });
        };
        if (!endpoints_.empty()) return plain().async_connect(endpoints_, on_connect);
        resolver_.async_resolve(target_.host, target_.port,
                                [&, on_connect](beast::error_code e, tcp::resolver::results_type r) {
                                    if (e) return void(ec = e);
                                    endpoints_ = std::move(r);
                                    plain().async_connect(endpoints_, on_connect);
                                });
    }

    template <class S>
    void read_answer(S& stream, unsigned& status, beast::error_code& ec) {
        parser_.emplace();
        parser_->body_limit(64 * 1024);  // a partial_success message, not a document
        bhttp::async_read(stream, buffer_, *parser_, [&](beast::error_code re, std::size_t) {
            if (re) return void(ec = re);
            status = parser_->get().result_int();
            keep_alive_ = parser_->keep_alive();
        });
    }

    // A failed exchange leaves the connection in an unknown state: it is closed. A new
    // connection that failed may mean the collector moved: the name is looked up again. A kept
    // one that failed was most likely closed by the collector while idle: the address stands
    // (a lookup costs more than the exchange).
    void drop_connection(bool look_up_again) {
        if (look_up_again) endpoints_ = {};
        stream_.reset();
        buffer_.clear();
        keep_alive_ = true;
    }

    beast::tcp_stream& plain() { return beast::get_lowest_layer(*stream_); }

    const ExporterTarget target_;
    net::ssl::context tls_;
    net::io_context ioc_;
    tcp::resolver resolver_{ioc_};
    tcp::resolver::results_type endpoints_;
    std::optional<Stream> stream_;  ///< the kept connection; its TLS layer unused for http://
    bool keep_alive_ = true;
    std::string head_fields_;    ///< "POST <target> HTTP/1.1", the fields, "Content-Length: "
    std::string request_head_;   ///< head_fields_ with this batch's length: its capacity reused
    std::array<net::const_buffer, 3> body_;  ///< the request head, the OTLP head, the spans
    beast::flat_buffer buffer_;
    std::optional<bhttp::response_parser<bhttp::string_body>> parser_;
};

}  // namespace

std::unique_ptr<Transport> make_http_transport(const ExporterTarget& target) {
    return std::make_unique<HttpTransport>(target);
}

}  // namespace ratelimitd::otlp
