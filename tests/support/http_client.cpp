// HttpClient: Beast's synchronous client, for tests only.
#include "support/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <cctype>

namespace ratelimitd::test {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

struct HttpClient::Impl {
    net::io_context ioc;
    beast::tcp_stream stream{ioc};
    beast::flat_buffer buffer;
    unsigned short port;
    bool connected = false;

    void connect() {
        stream.expires_after(std::chrono::seconds(10));
        stream.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
        connected = true;
    }
};

HttpClient::HttpClient(unsigned short port) : impl_(new Impl) { impl_->port = port; }

HttpClient::~HttpClient() {
    beast::error_code ignored;
    impl_->stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
    delete impl_;
}

HttpResponse HttpClient::get(const std::string& target, const std::map<std::string, std::string>& headers) {
    return request("GET", target, "", headers);
}

HttpResponse HttpClient::post(const std::string& target, const std::string& body,
                              const std::map<std::string, std::string>& headers) {
    auto h = headers;
    h.emplace("Content-Type", "application/json");
    return request("POST", target, body, h);
}

HttpResponse HttpClient::request(const std::string& method, const std::string& target, const std::string& body,
                                 const std::map<std::string, std::string>& headers) {
    // One retry on a fresh connection: the server may have closed an idle keep-alive one.
    for (int attempt = 0;; ++attempt) {
        try {
            if (!impl_->connected) impl_->connect();
            bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
            req.set(bhttp::field::host, "127.0.0.1");
            for (const auto& [k, v] : headers) req.set(k, v);
            if (!body.empty() || method == "POST") {
                req.body() = body;
                req.prepare_payload();
            }
            impl_->stream.expires_after(std::chrono::seconds(30));
            bhttp::write(impl_->stream, req);
            bhttp::response_parser<bhttp::string_body> parser;
            parser.body_limit(1 << 24);
            parser.header_limit(1 << 20);
            bhttp::read(impl_->stream, impl_->buffer, parser);
            auto res = parser.release();
            HttpResponse out;
            out.status = static_cast<int>(res.result_int());
            for (const auto& f : res) {
                std::string name(f.name_string());
                std::transform(name.begin(), name.end(), name.begin(),
                               [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
                out.headers[name] = std::string(f.value());
            }
            out.body = res.body();
            if (!res.keep_alive()) {
                beast::error_code ignored;
                impl_->stream.socket().close(ignored);
                impl_->connected = false;
                impl_->buffer.clear();
            }
            return out;
        } catch (const beast::system_error&) {
            beast::error_code ignored;
            impl_->stream.socket().close(ignored);
            impl_->connected = false;
            impl_->buffer.clear();
            if (attempt >= 1) throw;
        }
    }
}

}  // namespace ratelimitd::test
