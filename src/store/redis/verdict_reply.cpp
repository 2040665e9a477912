// The readers of the scripts' (and DEL's) reply shapes; parse_verdict is the one reader of a check's.
#include "ratelimitd/store/redis/verdict_reply.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

namespace ratelimitd::store::redis {

std::int64_t window_seconds(const policy::Policy& p) noexcept {
    return std::max<std::int64_t>(1, (p.window.count() + 999) / 1000);
}

namespace {

// allowed, limit, remaining, reset_epoch_s, retry_after_s, reset_after_s, reset_after_ms
constexpr std::size_t fields = 7;
// then, when a quota webhook threshold was claimed: window_end_ms, crossed_at_ms and 1-based
// positions; when a report's debt bound was too: 0 and the debt after them
// (lua/notify/crossings.lua)
constexpr std::size_t claims_from = fields + 2;
constexpr std::size_t most = claims_from + policy::max_notify_thresholds + 2;

using Numbers = std::span<const std::int64_t>;

// The script's numbers as one span: a flat array's own (FlatReply::element's: no Value per
// number to read or free), or an array of integer Values copied into `room`.
result<Numbers> script_numbers(const Value& reply, std::array<std::int64_t, most>& room) {
    if (reply.is_error()) return Problem{errc::bad_script_reply, "redis error: " + reply.str};
    const bool flat = reply.type == Value::Type::integers;
    const auto size = flat ? reply.integers.size() : reply.elements.size();
    if ((reply.type != Value::Type::array && !flat) || size < fields || (size > fields && size <= claims_from) ||
        size > most) {
        return Problem{errc::bad_script_reply, "expected an array of 7 integers from the script"};
    }
    // A flat array keeps its members that are no integer in `elements`.
    if (flat && !reply.elements.empty()) {
        return Problem{errc::bad_script_reply, "expected integers only from the script"};
    }
    if (flat) return Numbers(reply.integers.data(), size);
    for (std::size_t k = 0; k < size; ++k) {
        const Value& e = reply.elements[k];
        if (e.type != Value::Type::integer) {
            return Problem{errc::bad_script_reply, "expected integers only from the script"};
        }
        room[k] = e.integer;
    }
    return Numbers(room.data(), size);
}

}  // namespace

result<check::Verdict> parse_verdict(const Value& reply, const policy::Policy& p) {
    check::Verdict v;
    if (auto read = parse_verdict_into(reply, p, v); !read) return read.error();
    return v;
}

result<void> parse_verdict_into(const Value& reply, const policy::Policy& p, check::Verdict& out) {
    std::array<std::int64_t, most> room;
    const auto numbers = script_numbers(reply, room);
    if (!numbers) return numbers.error();
    const Numbers e = *numbers;
    const auto size = e.size();
    // Written into the verdict's own window: none is built apart and moved in.
    out.windows.clear();
    out.from_denial_cache = false;
    check::WindowState& w = out.windows.emplace_back();
    w.policy = p.name;
    // 0 denied, 1 admitted, 1 + d admitted with a delay of d ms (a policy with max_delay)
    w.allowed = e[0] >= 1;
    w.delay_ms = w.allowed ? e[0] - 1 : 0;
    w.limit = e[1];
    w.window_s = window_seconds(p);
    w.remaining = std::max<std::int64_t>(0, e[2]);
    // lua/erl_fixed_window.lua answers how far past its limit it counted as a negative remaining
    w.past_limit = std::max<std::int64_t>(0, -e[2]);
    w.reset_epoch_s = e[3];
    w.retry_after_s = e[4];
    w.reset_after_s = e[5];
    w.reset_after_ms = e[6];
    if (size > fields) {
        w.window_end_ms = e[fields];
        w.crossed_at_s = static_cast<std::uint32_t>(std::clamp<std::int64_t>(e[fields + 1] / 1000, 0, UINT32_MAX));
        std::size_t positions_end = size;
        if (size >= claims_from + 2 && e[size - 2] == 0) {
            if (e[size - 1] < 1) {
                return Problem{errc::bad_script_reply, "expected position 0 and the debt after it from the script"};
            }
            w.debt_passed = e[size - 1];
            positions_end = size - 2;
        }
        for (std::size_t k = claims_from; k < positions_end; ++k) {
            const std::int64_t position = e[k];
            if (position < 1 || position > static_cast<std::int64_t>(policy::max_notify_thresholds)) {
                return Problem{errc::bad_script_reply, "expected threshold positions 1..8 from the script"};
            }
            w.crossed = static_cast<std::uint8_t>(w.crossed | (1u << (position - 1)));
        }
    }

    out.allowed = w.allowed;
    return {};
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
