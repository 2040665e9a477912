// The byte stream under a Redis connection: plain TCP or TLS over TCP, opened without
// blocking the event loop (the host name is resolved asynchronously).
#pragma once

#include "ratelimitd/store/redis/endpoint.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace ratelimitd::store::redis {

/// One connection's stream. async_open() resolves, connects and, for an endpoint with `tls`,
/// loads the TLS options' files, sets SNI and the name to verify, and handshakes.
/// @par Thread Safety
/// Every member must be called on the executor given at construction.
class Transport {
public:
    /// Empty on success; else why it failed, in words fit for a log (never key material).
    using OpenHandler = std::function<void(std::string failure)>;

    Transport(const boost::asio::any_io_executor& ex, const Endpoint& endpoint);
    Transport(const Transport&) = delete;
    Transport& operator=(const Transport&) = delete;

    void async_open(OpenHandler handler);
    /// Writes all of `data`, which must stay alive and unchanged until `handler`
    /// (void(error_code, std::size_t)) runs. A template, not a std::function: the handler goes
    /// into Asio's operation as it is, whose memory Asio recycles, where a std::function
    /// holding more than two pointers would cost a heap allocation per write.
    template <class Handler>
    void async_write(const std::string& data, Handler&& handler) {
        if (tls_) boost::asio::async_write(*tls_, boost::asio::buffer(data), std::forward<Handler>(handler));
        else boost::asio::async_write(*plain_, boost::asio::buffer(data), std::forward<Handler>(handler));
    }
    /// Reads what has arrived into `buffer`; a template for the reason async_write is.
    template <class Handler>
    void async_read_some(boost::asio::mutable_buffer buffer, Handler&& handler) {
        if (tls_) tls_->async_read_some(buffer, std::forward<Handler>(handler));
        else plain_->async_read_some(buffer, std::forward<Handler>(handler));
    }
    /// Cancels everything in flight (their handlers run with operation_aborted). Idempotent.
    void close();

    /// The failure of a read, in words: for TLS, the alert the server sent if any.
    [[nodiscard]] static std::string describe_error(const boost::system::error_code& ec);

private:
    void on_connected(const boost::system::error_code& ec, OpenHandler handler);
    void handshake(OpenHandler handler);
    [[nodiscard]] std::string handshake_failure(const boost::system::error_code& ec);
    boost::asio::ip::tcp::socket& socket();

    Endpoint endpoint_;
    boost::asio::ip::tcp::resolver resolver_;
    std::optional<boost::asio::ip::tcp::socket> plain_;
    std::shared_ptr<boost::asio::ssl::context> context_;  // before tls_, which refers to it; shared by connections
    std::optional<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>> tls_;
    boost::asio::any_io_executor executor_;
};

}  // namespace ratelimitd::store::redis
