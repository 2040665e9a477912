// The text summary: what a person reads in a terminal.
#include "ratelimitd/simulate/log_time.hpp"
#include "ratelimitd/simulate/report.hpp"
#include "ratelimitd/simulate/share_text.hpp"

#include <fmt/format.h>

namespace ratelimitd::simulate {
namespace {


// The policies that delayed (max_delay), when any did: how many and how long.
void append_delays(std::string& out, const Summary& s) {
    bool any = false;
    for (const auto& [name, t] : s.policies) {
        if (t.delayed == 0) continue;
        if (!any) {
            out += fmt::format("\n{:<24} {:>12} {:>12} {:>12} {:>12}\n", "policy", "delayed", "p50 ms", "p99 ms",
                               "max ms");
            any = true;
        }
        out += fmt::format("{:<24} {:>12} {:>12} {:>12} {:>12}\n", name, t.delayed, t.delay_p50_ms, t.delay_p99_ms,
                           t.delay_max_ms);
    }
}

void append_summary(std::string& out, const Summary& s, std::size_t top) {
    out += fmt::format("{} lines, {} requests ({} denied, {}), {} unparsed", s.lines, s.requests, s.denied_requests,
                       share_text(s.denied_requests, s.requests), s.unparsed);
    if (s.late > 0) out += fmt::format(", {} logged more than the tolerance out of order", s.late);
    out += "\n\n";
    out += fmt::format("{:<24} {:>12} {:>12} {:>9} {:>15}\n", "policy", "checked", "denied", "denied%",
                       "tenants denied");
    for (const auto& [name, t] : s.policies) {
        out += fmt::format("{:<24} {:>12} {:>12} {:>9} {:>15}\n", name, t.checked, t.denied,
                           share_text(t.denied, t.checked), t.tenants_denied);
    }
    // Every request counted once: with one policy per route, checked adds up to requests.
    out += fmt::format("{:<24} {:>12} {:>12} {:>9} {:>15}\n", "(not limited)", s.unmatched, "-", "-", "-");
    append_delays(out, s);
    if (s.denials.empty()) {
        out += "\nno request denied\n";
        return;
    }
    out += "\ntenants denied most:\n";
    out += fmt::format("{:<24} {:<40} {:>10}  {}\n", "policy", "tenant", "denied", "first denied");
    for (std::size_t i = 0; i < s.denials.size() && i < top; ++i) {
        const auto& d = s.denials[i];
        out += fmt::format("{:<24} {:<40} {:>10}  {}\n", d.policy, d.tenant, d.denied, format_rfc3339(d.first_denied_ms));
    }
    std::uint64_t busiest = 0;
    std::int64_t busiest_at = 0;
    for (const auto& m : s.per_minute) {
        std::uint64_t n = 0;
        for (const auto& [policy, count] : m.denied) n += count;
        if (n > busiest) {
            busiest = n;
            busiest_at = m.minute_ms;
        }
    }
    out += fmt::format("\nmost denials in one minute: {} at {}\n", busiest, format_rfc3339(busiest_at));
}

void append_pairs(std::string& out, const char* title, const std::vector<PolicyTenant>& pairs) {
    out += fmt::format("{} ({}):\n", title, pairs.size());
    for (const auto& p : pairs) out += fmt::format("  {:<24} {}\n", p.policy, p.tenant);
}

// Per policy: denials under the baseline and the config, and the tenants that change side.
void append_difference(std::string& out, const Report& r) {
    out += fmt::format("difference from the baseline {}: requests denied {} -> {} of {}\n", r.baseline_name,
                       r.baseline->denied_requests, r.config.denied_requests, r.config.requests);
    out += fmt::format("{:<24} {:>14} {:>13} {:>8} {:>14} {:>17}\n", "policy", "denied before", "denied after", "change",
                       "newly denied", "no longer denied");
    std::size_t quiet = 0;  // policies that denied nobody under either config: not listed
    for (const auto& d : r.difference) {
        if (d.denied_before == 0 && d.denied_after == 0) {
            ++quiet;
            continue;
        }
        const auto change = static_cast<std::int64_t>(d.denied_after) - static_cast<std::int64_t>(d.denied_before);
        out += fmt::format("{:<24} {:>14} {:>13} {:>+8} {:>14} {:>17}\n", d.policy, d.denied_before, d.denied_after,
                           change, d.newly_denied, d.no_longer_denied);
    }
    if (quiet > 0) {
        out += fmt::format("({} more {} denied nobody under either config)\n", quiet, quiet == 1 ? "policy" : "policies");
    }
    out += "(newly / no longer denied: tenants; the pairs are listed at the end)\n\n";
}

}  // namespace

std::string to_text(const Report& report) {
    std::string out = fmt::format("simulate: {} replayed against {}\n", report.log_name, report.config_name);
    if (report.baseline) append_difference(out, report);
    append_summary(out, report.config, report.top);
    if (report.baseline) {
        out += fmt::format("\nbaseline {}:\n", report.baseline_name);
        append_summary(out, *report.baseline, report.top);
        out += "\n";
        append_pairs(out, "newly denied (denied by the config, never by the baseline)", report.newly_denied);
        append_pairs(out, "no longer denied (denied by the baseline, never by the config)", report.no_longer_denied);
    }
    return out;
}

}  // namespace ratelimitd::simulate
