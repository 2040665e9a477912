// Transport: resolve, connect and (for rediss://) the TLS handshake, all asynchronous.
#include "transport.hpp"

#include "tls_context.hpp"
#include "tls_context_cache.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace ratelimitd::store::redis {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

Transport::Transport(const net::any_io_executor& ex, const Endpoint& endpoint)
    : endpoint_(endpoint), resolver_(ex), executor_(ex) {}

tcp::socket& Transport::socket() { return tls_ ? tls_->next_layer() : *plain_; }

void Transport::async_open(OpenHandler handler) {
    if (endpoint_.tls) {
        // The files read again for this connection (a renewed certificate needs no restart);
        // a changed file that cannot be used keeps the last good context.
        auto ctx = TlsContextCache::process().get(endpoint_.tls_options);
        if (!ctx) {
            net::post(executor_, [h = std::move(handler), why = ctx.error().detail] { h(why); });
            return;
        }
        context_ = std::move(*ctx);
        tls_.emplace(executor_, *context_);
    } else {
        plain_.emplace(executor_);
    }
    resolver_.async_resolve(endpoint_.host, std::to_string(endpoint_.port), tcp::resolver::numeric_service,
                            [this, h = std::move(handler)](const boost::system::error_code& ec,
                                                           const tcp::resolver::results_type& results) mutable {
                                if (ec) {
                                    h("cannot resolve " + endpoint_.host + ": " + ec.message());
                                    return;
                                }
                                net::async_connect(socket(), results,
                                                   [this, h = std::move(h)](const boost::system::error_code& e,
                                                                            const tcp::endpoint&) mutable {
                                                       on_connected(e, std::move(h));
                                                   });
                            });
}

void Transport::on_connected(const boost::system::error_code& ec, OpenHandler handler) {
    if (ec) {
        handler(ec.message());
        return;
    }
    boost::system::error_code ignored;
    socket().set_option(tcp::no_delay(true), ignored);
    if (!tls_) {
        handler({});
        return;
    }
    handshake(std::move(handler));
}

void Transport::handshake(OpenHandler handler) {
    const TlsOptions& o = endpoint_.tls_options;
    set_expected_name(*tls_, o.server_name.empty() ? endpoint_.host : o.server_name, !o.insecure_skip_verify);
    tls_->async_handshake(ssl::stream_base::client,
                          [this, h = std::move(handler)](const boost::system::error_code& ec) {
                              h(ec ? handshake_failure(ec) : std::string());
                          });
}

std::string Transport::handshake_failure(const boost::system::error_code& ec) {
    if (ec == net::error::operation_aborted) return "TLS handshake cancelled";
    const long verdict = SSL_get_verify_result(tls_->native_handle());
    ERR_clear_error();
    if (verdict != X509_V_OK) {
        // "certificate has expired", "unable to get local issuer certificate", "hostname mismatch"...
        return std::string("TLS handshake failed: the server's certificate was refused: ") +
               X509_verify_cert_error_string(verdict);
    }
    return "TLS handshake failed: " + describe_error(ec);
}

std::string Transport::describe_error(const boost::system::error_code& ec) {
    if (ec.category() == ssl::error::get_stream_category() && ec == ssl::error::stream_truncated) {
        return "the TLS stream was cut short";
    }
    if (ec.category() == net::error::get_ssl_category()) {
        // The reason string only ("tlsv13 alert certificate required"), not library details.
        const char* reason = ERR_reason_error_string(static_cast<unsigned long>(ec.value()));
        return reason != nullptr ? std::string(reason) : ec.message();
    }
    return ec.message();
}

void Transport::close() {
    resolver_.cancel();
    if (!plain_ && !tls_) return;
    boost::system::error_code ignored;
    // No TLS close_notify: the connection is being abandoned, and waiting for the peer's
    // answer could hold it open; Redis treats either ending alike.
    socket().shutdown(tcp::socket::shutdown_both, ignored);
    socket().close(ignored);
}

}  // namespace ratelimitd::store::redis
