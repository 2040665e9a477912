// The path a route is matched on, normalised the way a reverse proxy routes it.
#pragma once

#include <string>
#include <string_view>

namespace ratelimitd::policy {

/// The path of `uri` (an origin-form "/a/b?q" or absolute-form "http://h/a/b" request target,
/// as X-Original-URI carries it raw) normalised as nginx does before matching locations:
/// query and fragment dropped, %XX decoded, "." and ".." segments resolved (never above "/"),
/// repeated slashes merged; a trailing slash is kept. Without this, "/%6cogin" or "/x/../login"
/// would reach the upstream's /login while missing a "/login" route here. Never fails.
[[nodiscard]] std::string normalize_path(std::string_view uri);

}  // namespace ratelimitd::policy
