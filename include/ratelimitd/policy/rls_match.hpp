// Which rule of a domain a descriptor reaches, as envoyproxy/ratelimit walks its tree.
#pragma once

#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/policy/rls_request.hpp"

#include <span>
#include <vector>

namespace ratelimitd::policy {

/// The rule of `level` one entry leads to: the rule with that key and value, else the first
/// (in file order) whose wildcard value (`"foo*"`, `"bar*b"`, ...) the value matches, else the
/// rule with that key and no value; nullptr when none has the key. Each wildcard rule of the
/// level costs at most O(|value| + |pattern|) (WildcardPattern).
[[nodiscard]] const RlsRule* match_entry(const RlsLevel& level, const RlsEntry& entry);

/// The rule the descriptor's last entry reaches, each entry walking one level down from the
/// domain's top level; nullptr when an entry finds no rule, or when the rules end before the
/// entries do (a descriptor longer than every path of the tree matches nothing, as in
/// envoyproxy/ratelimit). The rule may have no limit (`rate_limit:` absent): then nothing
/// limits the descriptor either.
[[nodiscard]] const RlsRule* match_descriptor(const RlsDomain& domain, std::span<const RlsEntry> entries);

/// The entries as envoyproxy/ratelimit keys a descriptor's counter: each entry that reached a
/// `share_threshold` wildcard rule carries the rule's pattern ("files*") instead of its value,
/// so every value it matches shares one counter; the others as sent. Walks the same path as
/// match_descriptor; `entries` must reach a rule there.
[[nodiscard]] std::vector<RlsEntry> share_threshold_entries(const RlsDomain& domain, std::span<const RlsEntry> entries);

}  // namespace ratelimitd::policy
