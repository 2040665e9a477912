// PolicyHolds: a locked map of atomics; a map node never moves, so a held slot may point in.
#include "ratelimitd/service/policy_holds.hpp"

#include <fmt/format.h>

namespace ratelimitd::service {

PolicyHolds::Counts& PolicyHolds::of(std::string_view policy) {
    std::lock_guard lock(mu_);
    auto it = counts_.find(policy);
    if (it == counts_.end()) it = counts_.try_emplace(std::string(policy)).first;
    return it->second;
}

void PolicyHolds::render_refused(std::string& out) const {
    std::lock_guard lock(mu_);
    for (const auto& [policy, counts] : counts_) {
        out += fmt::format("ratelimitd_held_refused_total{{policy=\"{}\",bound=\"process\"}} {}\n", policy,
                           counts.refused_by_process.load(std::memory_order_relaxed));
        out += fmt::format("ratelimitd_held_refused_total{{policy=\"{}\",bound=\"policy\"}} {}\n", policy,
                           counts.refused_by_policy.load(std::memory_order_relaxed));
    }
}

}  // namespace ratelimitd::service
