// Building the OpenSSL client context for a rediss:// connection from the TLS options.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <memory>
#include <string>

namespace ratelimitd::store::redis {

/// A client context that trusts `options.ca_file` (or the system's store), shows the client
/// certificate if one is given, and verifies the peer unless insecure_skip_verify. The files
/// are read now: called for every new connection, a renewed file is picked up on reconnect.
/// Fails with store_unavailable naming the file and OpenSSL's reason (never its content).
result<std::unique_ptr<boost::asio::ssl::context>> make_tls_context(const TlsOptions& options);

/// Sets SNI (for a DNS name) and the name or IP address the certificate must match on `stream`.
/// `name` is the server_name option, or the endpoint's host when that is empty.
void set_expected_name(boost::asio::ssl::stream<boost::asio::ip::tcp::socket>& stream, const std::string& name,
                       bool verify);

/// Logs, at most once a minute for the whole process, that certificates are not verified.
void warn_insecure_tls(const std::string& where);

}  // namespace ratelimitd::store::redis
