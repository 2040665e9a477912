// Reads the fixed reply shape every script returns.
#pragma once

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/store/redis/value.hpp"

namespace ratelimitd::store::redis {

/// Turns {allowed, limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
/// reset_after_ms} into a
/// Verdict with one window of policy `p`. Any other shape, or a Redis error reply, fails with
/// bad_script_reply and the reply's text in the detail. Never throws.
result<check::Verdict> parse_verdict(const Value& reply, const policy::Policy& p);

/// The window of `p` as whole seconds for the IETF w parameter: at least 1.
std::int64_t window_seconds(const policy::Policy& p) noexcept;

}  // namespace ratelimitd::store::redis
