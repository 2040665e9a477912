// Reads the fixed reply shape every script returns.
#pragma once

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/store/redis/value.hpp"
#include "ratelimitd/store/store.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {

/// Turns {allowed, limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
/// reset_after_ms[, window_end_ms, crossed_at_ms, crossed threshold positions...[, 0, debt]]}
/// (the tail: quota webhooks,
/// lua/notify/crossings.lua) into a
/// Verdict with one window of policy `p`. Any other shape, or a Redis error reply, fails with
/// bad_script_reply and the reply's text in the detail. Never throws.
result<check::Verdict> parse_verdict(const Value& reply, const policy::Policy& p);

/// parse_verdict, written into `out` (an awaiting caller's own verdict: none is moved back
/// through the layers between). On a failure `out` holds no verdict to read: the caller
/// degrades. Never throws but for bad_alloc.
result<void> parse_verdict_into(const Value& reply, const policy::Policy& p, check::Verdict& out);

/// The window of `p` as whole seconds for the IETF w parameter: at least 1.
std::int64_t window_seconds(const policy::Policy& p) noexcept;

/// A lua/multi.lua reply: one element per limit of `checks`, combined (all must allow).
result<check::Verdict> layered_verdict(const Value& reply, const std::vector<LimitCheck>& checks);

/// An algorithm script's reply in peek mode: `allowed` when at least one unit is left.
result<check::Verdict> peek_verdict(const Value& reply, const policy::Policy& p);

/// A DEL reply: true when the key existed.
result<bool> reset_result(const Value& reply);

/// Sets window `i`'s lease to `member` (the lease id sent) when `p` is a concurrency policy
/// and the whole check was allowed, so charged: a denied layered check holds nothing.
void attach_lease(check::Verdict& v, std::size_t i, const policy::Policy& p, const std::string& member);

}  // namespace ratelimitd::store::redis
