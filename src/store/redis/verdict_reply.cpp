// The readers of the scripts' (and DEL's) reply shapes; parse_verdict is the one reader of a check's.
#include "ratelimitd/store/redis/verdict_reply.hpp"

#include <algorithm>
#include <cstdint>

namespace ratelimitd::store::redis {

std::int64_t window_seconds(const policy::Policy& p) noexcept {
    return std::max<std::int64_t>(1, (p.window.count() + 999) / 1000);
}

result<check::Verdict> parse_verdict(const Value& reply, const policy::Policy& p) {
    if (reply.is_error()) return Problem{errc::bad_script_reply, "redis error: " + reply.str};
    // allowed, limit, remaining, reset_epoch_s, retry_after_s, reset_after_s, reset_after_ms
    constexpr size_t fields = 7;
    // then, when a quota webhook threshold was claimed: window_end_ms, crossed_at_ms and 1-based
    // positions; when a report's debt bound was too: 0 and the debt after them
    // (lua/notify/crossings.lua)
    constexpr size_t claims_from = fields + 2;
    constexpr size_t most = claims_from + policy::max_notify_thresholds + 2;
    const auto size = reply.elements.size();
    if (reply.type != Value::Type::array || size < fields || (size > fields && size <= claims_from) || size > most) {
        return Problem{errc::bad_script_reply, "expected an array of 7 integers from the script"};
    }
    for (const auto& e : reply.elements) {
        if (e.type != Value::Type::integer) {
            return Problem{errc::bad_script_reply, "expected integers only from the script"};
        }
    }
    const auto& e = reply.elements;
    check::WindowState w;
    w.policy = p.name;
    // 0 denied, 1 admitted, 1 + d admitted with a delay of d ms (a policy with max_delay)
    w.allowed = e[0].integer >= 1;
    w.delay_ms = w.allowed ? e[0].integer - 1 : 0;
    w.limit = e[1].integer;
    w.window_s = window_seconds(p);
    w.remaining = std::max<std::int64_t>(0, e[2].integer);
    // lua/erl_fixed_window.lua answers how far past its limit it counted as a negative remaining
    w.past_limit = std::max<std::int64_t>(0, -e[2].integer);
    w.reset_epoch_s = e[3].integer;
    w.retry_after_s = e[4].integer;
    w.reset_after_s = e[5].integer;
    w.reset_after_ms = e[6].integer;
    if (size > fields) {
        w.window_end_ms = e[fields].integer;
        w.crossed_at_s = static_cast<std::uint32_t>(std::clamp<std::int64_t>(e[fields + 1].integer / 1000, 0, UINT32_MAX));
        std::size_t positions_end = size;
        if (size >= claims_from + 2 && e[size - 2].integer == 0) {
            if (e[size - 1].integer < 1) {
                return Problem{errc::bad_script_reply, "expected position 0 and the debt after it from the script"};
            }
            w.debt_passed = e[size - 1].integer;
            positions_end = size - 2;
        }
        for (std::size_t k = claims_from; k < positions_end; ++k) {
            const std::int64_t position = e[k].integer;
            if (position < 1 || position > static_cast<std::int64_t>(policy::max_notify_thresholds)) {
                return Problem{errc::bad_script_reply, "expected threshold positions 1..8 from the script"};
            }
            w.crossed = static_cast<std::uint8_t>(w.crossed | (1u << (position - 1)));
        }
    }

    check::Verdict v;
    v.allowed = w.allowed;
    v.windows.push_back(std::move(w));
    return v;
}

result<check::Verdict> layered_verdict(const Value& reply, const std::vector<LimitCheck>& checks) {
    if (reply.is_error()) return Problem{errc::bad_script_reply, "redis error: " + reply.str};
    if (reply.type != Value::Type::array || reply.elements.size() != checks.size()) {
        return Problem{errc::bad_script_reply, "expected one reply per limit from lua/multi.lua"};
    }
    check::Verdict v;
    v.allowed = true;
    for (std::size_t i = 0; i < checks.size(); ++i) {
        auto one = parse_verdict(reply.elements[i], *checks[i].policy);
        if (!one) return one.error();
        v.allowed = v.allowed && one->allowed;
        v.windows.push_back(std::move(one->windows.front()));
    }
    return v;
}

result<check::Verdict> peek_verdict(const Value& reply, const policy::Policy& p) {
    auto verdict = parse_verdict(reply, p);
    if (verdict) {
        for (auto& w : verdict->windows) w.allowed = w.remaining >= 1;
        verdict->allowed = verdict->windows.front().allowed;
    }
    return verdict;
}

result<bool> reset_result(const Value& reply) {
    if (reply.type != Value::Type::integer) return Problem{errc::bad_script_reply, "DEL: " + reply.str};
    return reply.integer > 0;
}

void attach_lease(check::Verdict& v, std::size_t i, const policy::Policy& p, const std::string& member) {
    if (policy::traits(p.algorithm).member == policy::ScriptMember::lease && v.allowed && i < v.windows.size()) {
        v.windows[i].lease = member;
    }
}

}  // namespace ratelimitd::store::redis
