// ThreadTop: the slice ring of each policy, cleared lazily as time moves on; sampled past a rate.
#include "ratelimitd/service/thread_top.hpp"

#include "ratelimitd/core/same_text.hpp"

#include <algorithm>

namespace ratelimitd::service {

std::uint64_t TopOptions::exact_per_slice() const {
    const auto per_slice = static_cast<std::uint64_t>(slice().count()) * exact_per_second / 1000;
    return std::max<std::uint64_t>(1, per_slice);
}

std::int64_t ThreadTop::slice_index(clock::time_point now) const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() /
           options_.slice().count();
}

void ThreadTop::enter_slice(clock::time_point now) {
    slice_ = slice_index(now);
    // The bounds in the clock's own unit: a time in [begin, end) has this slice's index.
    slice_begin_ = clock::time_point(std::chrono::duration_cast<clock::duration>(options_.slice() * slice_));
    slice_end_ = slice_begin_ + std::chrono::duration_cast<clock::duration>(options_.slice());
    seen_in_slice_ = 0;
}

bool ThreadTop::sampled() noexcept {
    random_ ^= random_ << 13;
    random_ ^= random_ >> 7;
    random_ ^= random_ << 17;
    // The high 32 bits scaled to [0, sample_one_in): 0 with probability 1 / sample_one_in.
    return ((random_ >> 32) * options_.sample_one_in) >> 32 == 0;
}

void ThreadTop::record(std::string_view policy, std::string_view tenant, TopBy by, std::uint64_t amount,
                       clock::time_point now) {
    if (now < slice_begin_ || now >= slice_end_) enter_slice(now);
    if (++seen_in_slice_ > exact_per_slice_) {
        if (!sampled()) return;
        amount *= options_.sample_one_in;  // the kept check stands for the ones skipped
    }
    add(policy, tenant, by, amount);
}

void ThreadTop::record(std::string_view policy, std::string_view tenant, TopBy by, std::uint64_t amount) {
    if (seen_in_slice_ < exact_per_slice_) {
        record(policy, tenant, by, amount, clock::now());
        return;
    }
    ++seen_in_slice_;
    if (!sampled()) return;
    const auto now = clock::now();
    if (now < slice_begin_ || now >= slice_end_) {
        enter_slice(now);
        seen_in_slice_ = options_.sample_one_in;
    }
    add(policy, tenant, by, amount * options_.sample_one_in);
}

void ThreadTop::add(std::string_view policy, std::string_view tenant, TopBy by, std::uint64_t amount) {
    if (last_ == nullptr || !same_text(last_->first, policy)) {
        auto it = policies_.find(policy);
        if (it == policies_.end()) {
            Ring ring;
            ring.reserve(options_.slices);
            for (std::size_t i = 0; i < options_.slices; ++i) {
                ring.push_back({-1, SpaceSaving(options_.k), SpaceSaving(options_.k)});
            }
            it = policies_.emplace(std::string(policy), std::move(ring)).first;
        }
        last_ = &*it;
    }
    Slice& slice = last_->second[static_cast<std::size_t>(slice_) % options_.slices];
    if (slice.index != slice_) {
        // Its last use is at least a whole window old.
        slice.index = slice_;
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
