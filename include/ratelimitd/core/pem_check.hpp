// Reading and checking certificate files with OpenSSL before a TLS library is handed them: at
// start and on every change at run time. gRPC only learns that a key is empty by aborting the
// process, and that a certificate is cut short or does not match its key by failing every
// handshake; checked first, a bad file is refused by name and the last good one kept.
#pragma once

#include <optional>
#include <string>

namespace ratelimitd {

/// A file's bytes, or why it could not be read. `refusal` names the setting and the path,
/// never the content ("grpc_tls_key: cannot read /etc/tls/tls.key: No such file or directory").
struct PemRead {
    std::optional<std::string> bytes;
    std::string refusal;

    bool operator==(const PemRead&) const = default;
};

/// Reads the file of `setting` (at most 1 MiB: a path naming a device is not read forever).
PemRead read_pem_file(const std::string& setting, const std::string& path);

/// One file as read, with the setting that names it (for the refusal).
struct PemFile {
    std::string setting;
    std::string path;
    PemRead read;
};

/// Why this certificate chain and key cannot serve, or nothing: each file read and not empty,
/// the chain one or more PEM certificates that all parse (a half-written one does not), the
/// key an unencrypted PEM private key, and the key the one of the chain's first certificate.
std::optional<std::string> pem_pair_refusal(const PemFile& cert, const PemFile& key);

/// Why this CA bundle cannot be trusted, or nothing: read, not empty, one or more PEM
/// certificates that all parse.
std::optional<std::string> pem_bundle_refusal(const PemFile& bundle);

}  // namespace ratelimitd
