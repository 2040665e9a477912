// The scripts' argument layout, written out.
#include "ratelimitd/store/redis/script_args.hpp"

#include "ratelimitd/store/lease_id.hpp"

#include <algorithm>

namespace ratelimitd::store::redis {

namespace {

// The algorithm script's own ARGV[1..5], the tail of every layout.
void append_own_args(std::vector<std::string>& argv, CheckArgs& check) {
    argv.push_back(std::to_string(check.limit));
    argv.push_back(std::to_string(check.window_ms));
    argv.push_back(std::to_string(check.burst));
    argv.push_back(check.report ? std::to_string(check.report_cost) : std::to_string(check.cost));
    argv.push_back(std::move(check.member));
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
    CheckArgs args{p.algorithm, p.limit, p.window.count(), p.burst, cost, std::move(key), std::move(member)};
    if (p.notify) args.notify = policy::threshold_spec(*p.notify, p.limit);
    return args;
}

CheckArgs report_args(const policy::Policy& p, std::string key, std::int64_t report_cost, MemberSource& members) {
    CheckArgs args = check_args(p, std::move(key), 1, members);
    args.report = true;
    args.report_cost = report_cost;
    // A report crosses no threshold (they follow checks), but may pass the policy's debt bound.
    args.notify = p.notify ? policy::debt_spec(*p.notify) : std::string();
    args.max_debt = p.debt_bound();
    return args;
}

CheckArgs limit_args(const LimitCheck& c, MemberSource& members) {
    if (c.mode == policy::Mode::report) return report_args(*c.policy, c.key, c.report_cost, members);
    // An ask is the peek Store::peek sends: of one unit (cost 0 is the plan's "charge nothing").
    CheckArgs args = check_args(*c.policy, c.key, c.part == policy::Part::ask ? 1 : c.cost, members);
    args.part = c.part;
    if (c.part == policy::Part::ask) args.notify.clear();  // asked, never charged
    return args;
}

std::vector<std::string> single_check_argv(CheckArgs check, bool peek) {
    std::vector<std::string> argv;
    argv.reserve(3 + args_per_check);
    argv.emplace_back("1");
    argv.push_back(std::move(check.key));
    append_own_args(argv, check);
    if (peek) argv.emplace_back("peek");
    return argv;
}

std::vector<std::string> release_argv(const policy::Policy& p, std::string key, std::string lease) {
    CheckArgs check{p.algorithm, p.limit, p.window.count(), p.burst, 0, std::move(key), std::move(lease)};
    std::vector<std::string> argv = single_check_argv(std::move(check), false);
    argv.emplace_back("release");
    return argv;
}

std::vector<std::string> grouped_checks_argv(std::vector<CheckArgs> checks) {
    std::vector<std::string> argv;
    argv.reserve(1 + (1 + args_per_check) * checks.size());
    argv.push_back(std::to_string(checks.size()));
    for (auto& c : checks) argv.push_back(std::move(c.key));
    std::vector<std::string> notify_pairs;
    for (std::size_t i = 0; i < checks.size(); ++i) {
        if (checks[i].notify.empty()) continue;
        notify_pairs.push_back(std::to_string(i + 1));
        notify_pairs.push_back(std::move(checks[i].notify));
    }
    for (auto& c : checks) {
        argv.emplace_back(policy::to_string(c.algorithm));
        const bool report = c.report;
        const std::int64_t max_debt = c.max_debt;
        const policy::Part part = c.part;
        append_own_args(argv, c);
        argv.emplace_back(report                          ? "report:" + std::to_string(max_debt)
                          : part == policy::Part::ask     ? std::string("ask")
                          : part == policy::Part::charge ? std::string("charge")
                                                          : std::string());
    }
    for (auto& a : notify_pairs) argv.push_back(std::move(a));
    return argv;
}

}  // namespace ratelimitd::store::redis
