// The bucket-to-rule lookup of `rlqs:`.
#include "ratelimitd/policy/rlqs_rules.hpp"

#include <algorithm>

namespace ratelimitd::policy {

bool RlqsRule::matches(const RlqsBucketId& bucket) const {
    return std::all_of(match.begin(), match.end(), [&bucket](const RlqsMatch& m) {
        // Sorted by key: a binary search, so a rule costs O(matches * log pairs).
        const auto it = std::lower_bound(bucket.begin(), bucket.end(), m.key,
                                         [](const auto& pair, const std::string& key) { return pair.first < key; });
        return it != bucket.end() && it->first == m.key && m.matches(it->second);
    });
}

const RlqsRule* RlqsRules::find(std::string_view domain, const RlqsBucketId& bucket) const {
    const auto it = domains.find(domain);
    if (it == domains.end()) return nullptr;
    for (const RlqsRule& rule : it->second) {
        if (rule.matches(bucket)) return &rule;
    }
    return nullptr;
}

}  // namespace ratelimitd::policy
