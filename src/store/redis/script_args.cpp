// The scripts' argument layout, written out.
#include "ratelimitd/store/redis/script_args.hpp"

#include "ratelimitd/store/lease_id.hpp"

#include <algorithm>
#include <charconv>

namespace ratelimitd::store::redis {

namespace {

// The algorithm script's ARGV[1..3], a policy's numbers.
void append_numbers(std::string& out, const CheckArgs& check) {
    append_bulk(out, check.limit);
    append_bulk(out, check.window_ms);
    append_bulk(out, check.burst);
}

// The algorithm script's ARGV[4..5], the check's own.
void append_cost_and_member(std::string& out, const CheckArgs& check) {
    append_bulk(out, check.report ? check.report_cost : static_cast<std::int64_t>(check.cost));
    append_bulk(out, check.member);
}

// The algorithm script's own ARGV[1..5], the tail of every layout but lua/batch.lua's.
void append_own_args(std::string& out, const CheckArgs& check) {
    append_numbers(out, check);
    append_cost_and_member(out, check);
}

// The mode of lua/batch.lua and lua/multi.lua: ARGV[6] of the algorithm's script.
void append_mode(std::string& out, const CheckArgs& check) {
    if (check.report) {
        // "report:<max_debt>", written in place
        char mode[32] = "report:";
        constexpr std::size_t prefix = 7;
        const auto end = std::to_chars(mode + prefix, mode + sizeof mode, check.max_debt).ptr;
        append_bulk(out, std::string_view(mode, static_cast<std::size_t>(end - mode)));
        return;
    }
    switch (check.part) {
    case policy::Part::ask: append_bulk(out, std::string_view("ask")); return;
    case policy::Part::charge: append_bulk(out, std::string_view("charge")); return;
    default: append_bulk(out, std::string_view()); return;
    }
}

// ";delay:<queue>" after the member (token_bucket.lua's layout, else nothing): the units below
// empty the check may reserve (Policy::queue_units). Only a policy that delays pays for it.
void append_delay(std::string& member, std::int64_t queue_units) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, queue_units).ptr;
    member += ";delay:";
    member.append(digits, end);
}

}  // namespace

std::int64_t MemberSource::expiry_seconds(const policy::Policy& p) {
    // envoyproxy/ratelimit: the unit's seconds + rand.Int63n(EXPIRATION_JITTER_MAX_SECONDS).
    const std::int64_t unit_s = std::max<std::int64_t>(1, p.window.count() / 1000);
    const std::int64_t most = p.expiration_jitter.count();
    if (most <= 0) return unit_s;
    return unit_s + std::uniform_int_distribution<std::int64_t>(0, most - 1)(jitter_);
}

std::string MemberSource::next(const policy::Policy& p) {
    switch (policy::traits(p.algorithm).member) {
    case policy::ScriptMember::lease: return new_lease_id();
    case policy::ScriptMember::per_unit: return instance_id_ + ":" + std::to_string(++sequence_);
    case policy::ScriptMember::expiry: return std::to_string(expiry_seconds(p));
    case policy::ScriptMember::state_layout: return layout_ == StateLayout::hash ? "hash" : "";
    case policy::ScriptMember::none: return {};
    }
    return {};
}

std::string calendar_arg(const policy::Policy& p) {
    if (!p.calendar) return {};
    return "cal:" + std::string(to_string(*p.calendar)) + ":" + std::to_string(p.utc_offset_minutes);
}

CheckArgs check_args(const policy::Policy& p, std::string key, std::uint32_t cost, MemberSource& members) {
    std::string member = p.calendar ? calendar_arg(p) : members.next(p);
    if (p.queue_units > 0) append_delay(member, p.queue_units);
    CheckArgs args{p.algorithm, p.limit, p.window.count(), p.burst, cost, std::move(key), std::move(member)};
    if (p.notify) args.notify = policy::threshold_spec(*p.notify, p.limit);
    return args;
}

CheckArgs report_args(const policy::Policy& p, std::string key, std::int64_t report_cost, MemberSource& members) {
    CheckArgs args = check_args(p, std::move(key), 1, members);
    args.report = true;
    args.report_cost = report_cost;
    // A report crosses thresholds as the units it charges reach them, and may pass the
    // policy's debt bound.
    args.notify = p.notify ? policy::report_spec(*p.notify, p.limit) : std::string();
    args.max_debt = p.debt_bound();
    return args;
}

CheckArgs limit_args(const LimitCheck& c, MemberSource& members) {
    if (c.mode == policy::Mode::report) return report_args(*c.policy, c.key, c.report_cost, members);
    // An ask is the peek Store::peek sends: of one unit (cost 0 is the plan's "charge nothing").
    CheckArgs args = check_args(*c.policy, c.key, c.part == policy::Part::ask ? 1 : c.cost, members);
    args.part = c.part;
    // A layered check never reserves: lua/multi.lua decides its limits together by what fits now.
    if (c.policy->queue_units > 0) args.member = members.next(*c.policy);
    if (c.part == policy::Part::ask) args.notify.clear();  // asked, never charged
    return args;
}

std::size_t single_check_count(SingleMode mode) noexcept {
    constexpr std::size_t numkeys_key_and_own_args = 7;
    return numkeys_key_and_own_args + (mode == SingleMode::check ? 0 : 1);
}

void append_single_check(std::string& out, const CheckArgs& check, SingleMode mode) {
    append_bulk(out, std::string_view("1"));
    append_bulk(out, check.key);
    append_own_args(out, check);
    if (mode == SingleMode::peek) append_bulk(out, std::string_view("peek"));
    if (mode == SingleMode::release) append_bulk(out, std::string_view("release"));
}

std::size_t SingleCheck::count() const { return single_check_count(mode_); }

void SingleCheck::append_to(std::string& out) const { append_single_check(out, check_, mode_); }

SingleCheck release_call(const policy::Policy& p, std::string key, std::string lease) {
    CheckArgs check{p.algorithm, p.limit, p.window.count(), p.burst, 0, std::move(key), std::move(lease)};
    return SingleCheck(std::move(check), SingleMode::release);
}

void append_grouped_check(std::string& out, const CheckArgs& check) {
    append_bulk(out, policy::to_string(check.algorithm));
    append_own_args(out, check);
    append_mode(out, check);
}

void append_policy_numbers(std::string& out, const CheckArgs& check) {
    append_bulk(out, policy::to_string(check.algorithm));
    append_numbers(out, check);
}

void append_batch_check(std::string& out, std::size_t policy, const CheckArgs& check) {
    append_bulk(out, static_cast<std::int64_t>(policy));
    append_cost_and_member(out, check);
    append_mode(out, check);
}

void append_notify_pair(std::string& out, std::size_t index, const std::string& notify) {
    append_bulk(out, static_cast<std::int64_t>(index));
    append_bulk(out, notify);
}

}  // namespace ratelimitd::store::redis
