// Sets a verdict's rate-limit header values (headers/rate_limit_fields.hpp) on an HTTP answer.
#pragma once

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/headers/shown_counts.hpp"
#include "ratelimitd/http/rendered_answer.hpp"
#include "ratelimitd/http/types.hpp"

#include <boost/beast/http/fields.hpp>

namespace ratelimitd::http {

/// Sets X-RateLimit-Limit/-Remaining/-Reset (epoch seconds) from v.reported(),
/// RateLimit-Policy and RateLimit for every window, X-RateLimit-Lease when the verdict holds
/// a lease, and, when denied, Retry-After (whole seconds, >= 1, equal to the reported
/// window's t) and Cache-Control: no-store. Pure: touches nothing but `out`. Nothing when
/// v.windows is empty.
void set_rate_limit_headers(const check::Verdict& v, boost::beast::http::fields& out);

/// The same, on an answer's own fields.
void set_rate_limit_headers(const check::Verdict& v, Fields& out);

/// The same, appended to a rendered answer (which carries Cache-Control: no-store already).
void set_rate_limit_headers(const check::Verdict& v, RenderedAnswer& out);

/// The same, with the reported window's numbers as `shown` formatted them for the body too.
void set_rate_limit_headers(const check::Verdict& v, const headers::ShownCounts& shown, RenderedAnswer& out);

}  // namespace ratelimitd::http
