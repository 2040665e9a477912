// Where the Redis store connects: parsed from redis[s]://[:password@]host:port[/db].
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/store/tls_options.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd::store::redis {

using TlsOptions = store::TlsOptions;

struct Endpoint {
    std::string host = "127.0.0.1";
    int port = 6379;
    std::optional<std::string> username;  ///< ACL user (redis://user:password@...)
    std::optional<std::string> password;
    int db = 0;
    bool tls = false;          ///< rediss://: TLS on the connection, with tls_options
    TlsOptions tls_options;    ///< process settings (redis_tls_*), not part of the URL

    /// The URL without the password, safe for logs: "redis://127.0.0.1:6379/0".
    [[nodiscard]] std::string describe() const;
};

/// The credentials of a URL's "[[user]:password@]" part.
struct UserInfo {
    std::optional<std::string> username;
    std::optional<std::string> password;
};

/// Takes "[[user]:password@]" (up to the last '@') off the front of `rest`, decoding the
/// password's percent-escapes; nullopt when one is malformed. No '@': empty credentials.
std::optional<UserInfo> take_userinfo(std::string_view& rest);

/// Parses redis://[[user]:password@]host[:port][/db], or rediss:// for the same over TLS
/// (`tls` set). IPv6 hosts go in brackets. Percent-escapes in the password are decoded.
/// Fails with invalid_request naming what is wrong.
result<Endpoint> parse_redis_url(std::string_view url);

}  // namespace ratelimitd::store::redis
