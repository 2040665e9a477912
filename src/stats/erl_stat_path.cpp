// Stat key paths as envoyproxy/ratelimit's GetLimit builds them (detailed_metric,
// value_to_metric, share_threshold), from the rules ratelimitd matched.
#include "ratelimitd/stats/erl_stat_path.hpp"

#include "ratelimitd/policy/rls_match.hpp"

#include <cctype>
#include <vector>

namespace ratelimitd::stats {

namespace {

using policy::RlsEntry;
using policy::RlsRule;
using policy::escape_label_part;

bool digit(std::string_view s, std::size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); }

// The end of `\d{1,3}(\.\d{1,3}){3}` matched at `i` (group `g` of 4 onwards), trying the
// longest run of digits first as a backtracking engine's leftmost-first match does; npos when
// nothing matches there.
std::size_t ipv4_end(std::string_view s, std::size_t i, int g) {
    for (std::size_t n = 3; n >= 1; --n) {
        bool digits = true;
        for (std::size_t k = 0; k < n; ++k) digits = digits && digit(s, i + k);
        if (!digits) continue;
        if (g == 3) return i + n;
        if (i + n < s.size() && s[i + n] == '.') {
            if (const auto end = ipv4_end(s, i + n + 1, g + 1); end != std::string_view::npos) return end;
        }
    }
    return std::string_view::npos;
}

void append_part(std::string& out, std::string_view key, std::string_view value) {
    out += '.';
    out += escape_label_part(key);
    if (!value.empty()) {
        out += '_';
        out += escape_label_part(value);
    }
}

// value_to_metric's path: each level as it matched. The pattern of a share_threshold wildcard,
// the value sent where value_to_metric asks, else the rule's own value (none for a key-only rule).
std::string values_path(const policy::RlsDomain& domain, std::span<const RlsEntry> entries) {
    std::string out = escape_label_part(domain.name);
    const policy::RlsLevel* level = &domain.root;
    for (const auto& entry : entries) {
        const RlsRule* rule = level != nullptr ? policy::match_entry(*level, entry) : nullptr;
        if (rule == nullptr) {
            append_part(out, entry.key, "");
            break;
        }
        std::string_view value;
        switch (rule->match) {
        case RlsRule::ValueMatch::exact: value = entry.value; break;
        case RlsRule::ValueMatch::wildcard:
            value = rule->share_threshold || !rule->value_to_metric ? std::string_view(rule->value) : entry.value;
            break;
        case RlsRule::ValueMatch::any: value = rule->value_to_metric ? entry.value : std::string_view(); break;
        }
        append_part(out, entry.key, value);
        level = &rule->children;
    }
    return out;
}

// detailed_metric's path: every entry's key "_" value, but a share_threshold wildcard's
// pattern in place of the value it matched.
std::string detailed_path(const policy::RlsDomain& domain, std::span<const RlsEntry> entries) {
    const auto shared = domain.shares_threshold ? policy::share_threshold_entries(domain, entries)
                                                : std::vector<RlsEntry>(entries.begin(), entries.end());
    std::string out = escape_label_part(domain.name);
    for (const auto& e : shared) {
        out += '.';
        out += escape_label_part(e.key);
        out += '_';  // detailed: "key_" even when the value is empty
        out += escape_label_part(e.value);
    }
    return out;
}

}  // namespace

std::string sanitize_stat_name(std::string_view name) {
    std::string out(name);
    for (auto& c : out) {
        const auto u = static_cast<unsigned char>(c);
        if (c == ':' || c == '|' || u <= 0x20 || u >= 0x7f) c = '_';
    }
    for (std::size_t i = 0; i < out.size();) {
        const auto end = digit(out, i) ? ipv4_end(out, i, 0) : std::string::npos;
        if (end == std::string::npos) {
            ++i;
            continue;
        }
        for (std::size_t k = i; k < end; ++k) {
            if (out[k] == '.') out[k] = '_';
        }
        i = end;
    }
    return out;
}

std::optional<std::string> value_stat_path(const policy::RlsDomain& domain, const RlsRule& rule,
                                           std::span<const RlsEntry> entries) {
    if (rule.detailed_metric) return detailed_path(domain, entries);
    if (domain.values_in_stats) return values_path(domain, entries);
    return std::nullopt;
}

std::string override_stat_path(std::string_view domain, std::span<const RlsEntry> entries) {
    std::string out = escape_label_part(domain);
    for (const auto& e : entries) append_part(out, e.key, e.value);
    return out;
}

}  // namespace ratelimitd::stats
