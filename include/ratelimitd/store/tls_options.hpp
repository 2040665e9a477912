// How ratelimitd speaks TLS to a remote store (rediss://): trust, client certificate, name.
#pragma once

#include <string>

namespace ratelimitd::store {

/// How a TLS connection to Redis verifies the server and which certificate it shows. The
/// files are read again at every new connection, so renewed certificates are picked up by
/// the next reconnect without a restart.
struct TlsOptions {
    std::string ca_file;      ///< PEM bundle of trusted CAs; empty: the system's store
    std::string cert_file;    ///< client certificate (PEM), for tls-auth-clients; with key_file
    std::string key_file;     ///< its private key (PEM); never logged
    std::string server_name;  ///< SNI and the name verified; empty: the endpoint's host
    bool insecure_skip_verify = false;  ///< no verification at all (warned about every minute)
};

}  // namespace ratelimitd::store
