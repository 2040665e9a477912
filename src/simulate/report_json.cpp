// The JSON summary (docs/simulate.md) and the difference between two configs.
#include "ratelimitd/simulate/log_time.hpp"
#include "ratelimitd/simulate/report.hpp"

#include <algorithm>
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
        minutes.push_back({{"minute", format_rfc3339(m.minute_ms)}, {"requests", m.requests}, {"denied", denied}});
    }
    out["per_minute"] = std::move(minutes);
    return out;
}

nlohmann::ordered_json pairs_json(const std::vector<PolicyTenant>& pairs) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& p : pairs) out.push_back({{"policy", p.policy}, {"tenant", p.tenant}});
    return out;
}

}  // namespace

void compare(Report& report) {
    if (!report.baseline) return;
    const Pairs now = denied_pairs(report.config);
    const Pairs before = denied_pairs(*report.baseline);
    report.newly_denied = only_in(now, before);
    report.no_longer_denied = only_in(before, now);
}

nlohmann::ordered_json to_json(const Report& report) {
    nlohmann::ordered_json out = summary_json(report.config, report.top);
    if (report.baseline) {
        out["baseline"] = summary_json(*report.baseline, report.top);
        out["newly_denied"] = pairs_json(report.newly_denied);
        out["no_longer_denied"] = pairs_json(report.no_longer_denied);
    }
    return out;
}

}  // namespace ratelimitd::simulate
