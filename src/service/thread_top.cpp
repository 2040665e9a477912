// ThreadTop: the slice ring of each policy, cleared lazily as time moves on.
#include "ratelimitd/service/thread_top.hpp"

namespace ratelimitd::service {

std::int64_t ThreadTop::slice_index(clock::time_point now) const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() /
           options_.slice().count();
}

void ThreadTop::record(std::string_view policy, std::string_view tenant, TopBy by, std::uint64_t amount,
                       clock::time_point now) {
    auto it = policies_.find(policy);
    if (it == policies_.end()) {
        Ring ring;
        ring.reserve(options_.slices);
        for (std::size_t i = 0; i < options_.slices; ++i) ring.push_back({-1, SpaceSaving(options_.k), SpaceSaving(options_.k)});
        it = policies_.emplace(std::string(policy), std::move(ring)).first;
    }
    const std::int64_t index = slice_index(now);
    Slice& slice = it->second[static_cast<std::size_t>(index) % options_.slices];
    if (slice.index != index) {
        // Its last use is at least a whole window old.
        slice.index = index;
        slice.denied.clear();
        slice.admitted.clear();
    }
    (by == TopBy::denied ? slice.denied : slice.admitted).add(tenant, amount);
}

void ThreadTop::copy_live(const Ring& ring, TopBy by, std::int64_t current, PolicySketches& into) const {
    const auto slices = static_cast<std::int64_t>(options_.slices);
    for (const Slice& s : ring) {
        if (s.index < 0 || s.index > current || s.index <= current - slices) continue;
        const SpaceSaving& sketch = by == TopBy::denied ? s.denied : s.admitted;
        if (!sketch.entries().empty()) into.sketches.push_back(sketch);
    }
}

std::vector<PolicySketches> ThreadTop::snapshot(const std::optional<std::string>& policy, TopBy by,
                                                clock::time_point now) const {
    const std::int64_t current = slice_index(now);
    std::vector<PolicySketches> out;
    for (const auto& [name, ring] : policies_) {
        if (policy && name != *policy) continue;
        PolicySketches p{name, {}};
        copy_live(ring, by, current, p);
        if (!p.sketches.empty()) out.push_back(std::move(p));
    }
    return out;
}

}  // namespace ratelimitd::service
