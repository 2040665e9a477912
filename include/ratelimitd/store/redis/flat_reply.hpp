// lua/batch.lua's flat reply, shared out among the checks of the call.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/store/redis/value.hpp"

#include <cstddef>
#include <cstdint>

namespace ratelimitd::store::redis {

/// The reply to one lua/batch.lua call of n checks: {time_ms, then per check allowed,
/// remaining, reset_after_ms, then for each check with more values (quota webhooks' crossings):
/// its 1-based index, how many, the values}. Its shape is checked once, when made; element()
/// then gives each check its reply as the algorithm's own script gives it, the numbers the
/// script left out derived here exactly as every script computes them (lua/batch.lua's head),
/// so parse_verdict reads it as a lone check's and every header is the same. The reply is read
/// flat by the connection (Value::Type::integers, ScriptArgs::flat_reply); an array of Values
/// (any other reader's) is read the same.
/// Holds `reply` by reference: it must outlive this.
class FlatReply {
public:
    FlatReply(const result<Value>& reply, std::size_t n);

    /// Check `i`'s reply: {allowed, limit, remaining, reset_epoch_s, retry_after_s,
    /// reset_after_s, reset_after_ms[, its extra values]}, with `limit` its policy's (what every
    /// script returns), as a flat array (Value::Type::integers: parse_verdict reads its numbers
    /// where they are, no Value is made or freed per number). A failure or an error reply of
    /// the whole call is everyone's (a Redis Cluster redirect stays a Value, to be followed); a
    /// check's own error, or a reply of any other shape, is bad_script_reply, so it cannot be
    /// taken for a redirect of the call.
    [[nodiscard]] result<Value> element(std::size_t i, std::int64_t limit) const;

    /// ceil(a / b) for b > 0, as Lua's math.ceil(a / b) gives it for integers below 2^53.
    [[nodiscard]] static std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept {
        return a / b + (a % b != 0 && a > 0 ? 1 : 0);
    }

private:
    /// True when the reply is an array of the shape above for n_ checks.
    [[nodiscard]] bool well_formed() const noexcept;

    const result<Value>& reply_;
    std::size_t n_;
    bool whole_ = false;  ///< the call failed or answered an error: everyone's
    bool well_formed_ = false;
};

}  // namespace ratelimitd::store::redis
