// Renders a verdict as X-RateLimit-*, IETF RateLimit / RateLimit-Policy and Retry-After.
#pragma once

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/http/types.hpp"

#include <boost/beast/http/fields.hpp>

#include <string>

namespace ratelimitd::http {

/// `"api-default";q=60;w=60` — one member per window, joined by ", " (draft-ietf-httpapi-
/// ratelimit-headers-11 §3). Integers are clamped to 15 digits.
std::string rate_limit_policy_field(const check::Verdict& v);

/// `"api-default";r=59;t=1` — one member per window, joined by ", " (draft -11 §4).
std::string rate_limit_field(const check::Verdict& v);

/// Sets X-RateLimit-Limit/-Remaining/-Reset (epoch seconds) from v.reported(),
/// RateLimit-Policy and RateLimit for every window, and, when denied, Retry-After (whole
/// seconds, >= 1, equal to the reported window's t) and Cache-Control: no-store.
/// Pure: touches nothing but `out`. Precondition: v.windows is not empty.
void set_rate_limit_headers(const check::Verdict& v, boost::beast::http::fields& out);

/// The same, on an answer's own fields.
void set_rate_limit_headers(const check::Verdict& v, Fields& out);

}  // namespace ratelimitd::http
