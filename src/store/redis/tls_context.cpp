// The OpenSSL client context for rediss://: trust, client certificate, name verification.
#include "tls_context.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>

namespace ratelimitd::store::redis {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;

namespace {

constexpr std::chrono::seconds insecure_warning_interval{60};

/// OpenSSL's reason for a failure ("no such file", "bad decrypt"), never the file's content.
std::string openssl_reason(const boost::system::error_code& ec) {
    ERR_clear_error();
    if (ec.category() == net::error::get_ssl_category()) {
        if (const char* reason = ERR_reason_error_string(static_cast<unsigned long>(ec.value()))) return reason;
    }
    return ec.message();
}

Problem unusable(const std::string& what, const std::string& file, const boost::system::error_code& ec) {
    return Problem{errc::store_unavailable, "redis TLS: cannot use the " + what + " " + file + ": " + openssl_reason(ec)};
}

}  // namespace

result<std::unique_ptr<ssl::context>> make_tls_context(const TlsOptions& options) {
    auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                     ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    boost::system::error_code ec;
    if (!options.ca_file.empty()) {
        ctx->load_verify_file(options.ca_file, ec);
        if (ec) return unusable("CA file", options.ca_file, ec);
    } else {
        ctx->set_default_verify_paths(ec);
        if (ec) return unusable("system CA store", "", ec);
    }
    if (options.cert_file.empty() != options.key_file.empty()) {
        return Problem{errc::store_unavailable, "redis TLS: a client certificate needs both redis_tls_cert and "
                                                "redis_tls_key"};
    }
    if (!options.cert_file.empty()) {
        ctx->use_certificate_chain_file(options.cert_file, ec);
        if (ec) return unusable("client certificate", options.cert_file, ec);
        ctx->use_private_key_file(options.key_file, ssl::context::pem, ec);
        if (ec) return unusable("client key", options.key_file, ec);
        if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
            ERR_clear_error();
            return Problem{errc::store_unavailable, "redis TLS: the client key " + options.key_file +
                                                        " does not match the certificate " + options.cert_file};
        }
    }
    ctx->set_verify_mode(options.insecure_skip_verify ? ssl::verify_none : ssl::verify_peer, ec);
    return ctx;
}

void set_expected_name(ssl::stream<net::ip::tcp::socket>& stream, const std::string& name, bool verify) {
    SSL* s = stream.native_handle();
    boost::system::error_code not_ip;
    (void)net::ip::make_address(name, not_ip);
    // SNI carries DNS names only (RFC 6066); an IP address is checked against the IP SANs.
    if (not_ip) SSL_set_tlsext_host_name(s, name.c_str());
    if (!verify) return;
    X509_VERIFY_PARAM* param = SSL_get0_param(s);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (not_ip) X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
    else X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
}

void warn_insecure_tls(const std::string& where) {
    static std::atomic<std::int64_t> next_warning{0};
    const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::steady_clock::now().time_since_epoch()).count();
    std::int64_t due = next_warning.load(std::memory_order_relaxed);
    if (now < due) return;
    if (!next_warning.compare_exchange_strong(due, now + insecure_warning_interval.count())) return;
    spdlog::warn("redis: TLS to {} does not verify the server's certificate (redis_tls_insecure_skip_verify "
                 "is on): anyone on the path can read and change the limits; turn it off",
                 where);
}

}  // namespace ratelimitd::store::redis
