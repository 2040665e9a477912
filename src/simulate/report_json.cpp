// The JSON summary (docs/simulate.md) and the difference between two configs.
#include "ratelimitd/simulate/log_time.hpp"
#include "ratelimitd/simulate/report.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace ratelimitd::simulate {
namespace {

using Pairs = std::set<std::pair<std::string, std::string>>;

Pairs denied_pairs(const Summary& s) {
    Pairs out;
    for (const auto& d : s.denials) out.emplace(d.policy, d.tenant);
    return out;
}

std::vector<PolicyTenant> only_in(const Pairs& a, const Pairs& b) {
    std::vector<PolicyTenant> out;
    for (const auto& p : a) {
        if (!b.contains(p)) out.push_back({p.first, p.second});
    }
    return out;
}

nlohmann::ordered_json summary_json(const Summary& s, std::size_t top) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["lines"] = s.lines;
    out["requests"] = s.requests;
    out["unparsed"] = s.unparsed;
    out["unmatched"] = s.unmatched;
    out["denied_requests"] = s.denied_requests;
    nlohmann::ordered_json policies = nlohmann::ordered_json::object();
    for (const auto& [name, t] : s.policies) {
        policies[name] = {{"checked", t.checked}, {"denied", t.denied}, {"tenants_denied", t.tenants_denied}};
        if (t.delayed > 0) {
            policies[name]["delayed"] = t.delayed;
            policies[name]["delay_ms"] = {{"p50", t.delay_p50_ms}, {"p99", t.delay_p99_ms}, {"max", t.delay_max_ms}};
        }
    }
    out["policies"] = std::move(policies);
    nlohmann::ordered_json top_denied = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < s.denials.size() && i < top; ++i) {
        const auto& d = s.denials[i];
        top_denied.push_back({{"policy", d.policy},
                              {"tenant", d.tenant},
                              {"denied", d.denied},
                              {"first_denied", format_rfc3339(d.first_denied_ms)}});
    }
    out["top_denied"] = std::move(top_denied);
    nlohmann::ordered_json minutes = nlohmann::ordered_json::array();
    for (const auto& m : s.per_minute) {
        nlohmann::ordered_json denied = nlohmann::ordered_json::object();
        for (const auto& [policy, n] : m.denied) denied[policy] = n;
        minutes.push_back({{"minute", format_rfc3339(m.minute_ms)},
                           {"requests", m.requests},
                           {"denied_requests", m.denied_requests},
                           {"denied", denied}});
    }
    out["per_minute"] = std::move(minutes);
    return out;
}

nlohmann::ordered_json pairs_json(const std::vector<PolicyTenant>& pairs) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& p : pairs) out.push_back({{"policy", p.policy}, {"tenant", p.tenant}});
    return out;
}

// Per policy of either config: its denials under each, and how many of its (policy, tenant)
// pairs each difference list holds.
std::vector<PolicyDifference> per_policy(const Report& report) {
    std::map<std::string, PolicyDifference> rows;
    const auto row = [&](const std::string& policy) -> PolicyDifference& {
        PolicyDifference& r = rows[policy];
        r.policy = policy;
        return r;
    };
    for (const auto& [name, t] : report.baseline->policies) row(name).denied_before = t.denied;
    for (const auto& [name, t] : report.config.policies) row(name).denied_after = t.denied;
    for (const auto& p : report.newly_denied) ++row(p.policy).newly_denied;
    for (const auto& p : report.no_longer_denied) ++row(p.policy).no_longer_denied;
    std::vector<PolicyDifference> out;
    for (auto& [name, r] : rows) out.push_back(std::move(r));
    return out;
}

nlohmann::ordered_json difference_json(const std::vector<PolicyDifference>& rows) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto& r : rows) {
        out[r.policy] = {{"denied_before", r.denied_before},
                         {"denied_after", r.denied_after},
                         {"newly_denied", r.newly_denied},
                         {"no_longer_denied", r.no_longer_denied}};
    }
    return out;
}

}  // namespace

void compare(Report& report) {
    if (!report.baseline) return;
    const Pairs now = denied_pairs(report.config);
    const Pairs before = denied_pairs(*report.baseline);
    report.newly_denied = only_in(now, before);
    report.no_longer_denied = only_in(before, now);
    report.difference = per_policy(report);
}

nlohmann::ordered_json to_json(const Report& report) {
    nlohmann::ordered_json out = summary_json(report.config, report.top);
    if (report.baseline) {
        out["baseline"] = summary_json(*report.baseline, report.top);
        out["newly_denied"] = pairs_json(report.newly_denied);
        out["no_longer_denied"] = pairs_json(report.no_longer_denied);
        out["difference"] = difference_json(report.difference);
    }
    return out;
}

}  // namespace ratelimitd::simulate
