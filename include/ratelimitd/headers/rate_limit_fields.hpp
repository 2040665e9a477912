// A verdict's rate-limit header values (X-RateLimit-*, RateLimit, RateLimit-Policy,
// Retry-After), rendered without any transport: HTTP sets them on its answer, gRPC hands them
// to Envoy, each under the same names and with the same values.
#pragma once

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/headers/shown_counts.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ratelimitd::headers {

/// RFC 9651 §3.3.1: an sf-integer has at most 15 digits. Every count a header or an answer's
/// body shows is clamped to 0..this, so the two never disagree.
inline constexpr std::int64_t max_shown_count = 999'999'999'999'999;

/// `n` clamped to 0..max_shown_count. Negative values would be a store bug, but a number the
/// client cannot parse is worse than a clamped one.
std::int64_t shown_count(std::int64_t n) noexcept;

/// The Retry-After of a denied window, in whole seconds: at least 1 (a client never retries
/// at once), at most max_shown_count. The one rule for the header, the RateLimit field's t of
/// a denied window, the answers' "retry_after" and gRPC's duration_until_reset.
std::int64_t retry_after_of(const check::WindowState& w) noexcept;

/// `"api-default";q=60;w=60` — one member per window, joined by ", " (draft-ietf-httpapi-
/// ratelimit-headers-11 §3). Integers are clamped as shown_count.
std::string rate_limit_policy_field(const check::Verdict& v);

/// `"api-default";r=59;t=1` — one member per window, joined by ", " (draft -11 §4).
std::string rate_limit_field(const check::Verdict& v);

/// The header lines a verdict can carry.
enum class RateLimitHeader : unsigned char {
    x_limit,        ///< X-RateLimit-Limit: the reported window's limit
    x_remaining,    ///< X-RateLimit-Remaining
    x_reset,        ///< X-RateLimit-Reset (epoch seconds)
    policy,         ///< RateLimit-Policy, every window
    rate_limit,     ///< RateLimit, every window
    lease,          ///< X-RateLimit-Lease, when the verdict holds one
    retry_after,    ///< Retry-After, when denied: retry_after_of the reported window
    no_store,       ///< Cache-Control: no-store, when denied
};

/// The name a header line goes by ("X-RateLimit-Limit", "Retry-After", ...).
std::string_view header_name(RateLimitHeader h) noexcept;

/// Where header lines go: a transport's own fields.
class HeaderSink {
public:
    /// `value` is valid during the call only.
    virtual void set(std::string_view name, std::string_view value) = 0;

protected:
    ~HeaderSink() = default;
};

/// Sets the lines of `which` that `v` carries on `out`, in the order given (lease only when
/// the verdict holds one, retry_after and no_store only when it denies). Builds no string of
/// its own for the two structured fields (one buffer per thread). Nothing when v.windows is
/// empty: no numbers to show. Touches nothing but `out`.
void set_rate_limit_headers(const check::Verdict& v, std::span<const RateLimitHeader> which, HeaderSink& out);

/// The same lines as set_rate_limit_headers, as HTTP/1 field lines ("Name: value" CRLF each)
/// in one buffer of this thread's, valid until the thread's next call: an answer written as
/// wire text appends them in one copy (the sink's call per line, and its appends per piece,
/// were about 2,400 instructions of a check's).
std::string_view http_field_lines(const check::Verdict& v, std::span<const RateLimitHeader> which);

/// The same, with the reported window's numbers as `shown` formatted them (an answer whose
/// body shows them too formats them once).
std::string_view http_field_lines(const check::Verdict& v, std::span<const RateLimitHeader> which,
                                  const ShownCounts& shown);

}  // namespace ratelimitd::headers
