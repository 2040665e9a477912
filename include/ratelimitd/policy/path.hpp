// The path a route is matched on: one canonical spelling of the paths a backend routes alike.
#pragma once

#include <string>
#include <string_view>

namespace ratelimitd::policy {

/// The path of `uri` (an origin-form "/a/b?q" or absolute-form "scheme://h/a/b" request target,
/// as X-Original-URI carries it raw, or the `path` of a /v1/check) in one canonical form, so that
/// "/login", "//login", "/%6Cogin", "/a/../login" and "/login;jsessionid=x" are one path:
/// - query and fragment dropped; an absolute-form target's scheme and authority dropped;
/// - every %XX decoded once, as nginx does before choosing a location — %2F included: it then
///   separates segments ("/a%2Fb" is "/a/b"), because nginx routes it so and hands that path to
///   FastCGI; "%2541" is "%41" (decoded once, never twice);
/// - in each segment, ';' and what follows dropped (path parameters, "/..;/" included);
/// - "." and ".." segments resolved (never above "/"), empty segments dropped;
/// - bytes outside RFC 3986 pchar ('%', '?', '#', '\\', controls, non-ASCII; ';' cannot remain)
///   written %XX with upper-case hex; "\\" is data, not a separator (as nginx on Linux).
/// A trailing slash is kept ("/v1/", and for paths ending in "/." or "/.."). The result starts
/// with '/', holds no "//", no "." or ".." segment and no ';', and is a fixed point:
/// normalize_path(normalize_path(x)) == normalize_path(x). Never fails.
[[nodiscard]] std::string normalize_path(std::string_view uri);

/// The path of `uri` as a backend that decodes but never normalises sees it (Flask's
/// PATH_INFO, a proxy_pass without URI that forwards the raw target): like normalize_path,
/// but "." / ".." segments, repeated slashes and ';' parameters are kept. Route matching
/// gives this reading a second look when the normal form is not limited (see match_route).
[[nodiscard]] std::string path_as_sent(std::string_view uri);

/// Whether `path` is already in both forms above: it starts with '/' and holds only the bytes
/// they write as they are (RFC 3986 pchar without '%' and ';') and '/', with no "//" and no
/// "." or ".." segment. Then normalize_path(path) == path_as_sent(path) == path, so a route can
/// be matched on it as it is, with no copy (the paths of most requests).
[[nodiscard]] bool is_normal_path(std::string_view path) noexcept;

}  // namespace ratelimitd::policy
