// The descriptor matcher: a pure walk of the domain's tree, one level per entry.
#include "ratelimitd/policy/rls_match.hpp"

namespace ratelimitd::policy {

const RlsRule* match_entry(const RlsLevel& level, const RlsEntry& entry) {
    if (auto it = level.exact.find(RlsLevel::exact_index(entry.key, entry.value)); it != level.exact.end()) {
        return &level.rules[it->second];
    }
    for (const std::size_t i : level.wildcards) {
        const RlsRule& rule = level.rules[i];
        // Key and value apart: envoyproxy/ratelimit compares "key_value" strings, where key
        // "a" with value "b_c*" would also take key "a_b" with value "c..."; nothing here does.
        if (rule.key == entry.key && rule.wildcard->matches(entry.value)) return &rule;
    }
    if (auto it = level.key_only.find(entry.key); it != level.key_only.end()) return &level.rules[it->second];
    return nullptr;
}

const RlsRule* match_descriptor(const RlsDomain& domain, std::span<const RlsEntry> entries) {
    const RlsLevel* level = &domain.root;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const RlsRule* rule = match_entry(*level, entries[i]);
        if (rule == nullptr) return nullptr;
        if (i + 1 == entries.size()) return rule;
        // More entries than this path has levels: the descriptor is more specific than any
        // rule, and envoyproxy/ratelimit applies no limit to it.
        if (rule->children.rules.empty()) return nullptr;
        level = &rule->children;
    }
    return nullptr;  // no entries
}

std::vector<RlsEntry> share_threshold_entries(const RlsDomain& domain, std::span<const RlsEntry> entries) {
    std::vector<RlsEntry> out(entries.begin(), entries.end());
    const RlsLevel* level = &domain.root;
    for (auto& entry : out) {
        const RlsRule* rule = level != nullptr ? match_entry(*level, entry) : nullptr;
        if (rule == nullptr) break;
        if (rule->share_threshold && rule->match == RlsRule::ValueMatch::wildcard) entry.value = rule->value;
        level = &rule->children;
    }
    return out;
}

}  // namespace ratelimitd::policy
