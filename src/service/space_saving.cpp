// SpaceSaving: one scan finds the tenant or, when all slots are taken, the smallest count.
#include "ratelimitd/service/space_saving.hpp"

#include <algorithm>
#include <functional>

namespace ratelimitd::service {

void SpaceSaving::add(std::string_view tenant, std::uint64_t amount) {
    if (k_ == 0) return;
    total_ += amount;
    const std::size_t h = std::hash<std::string_view>{}(tenant);
    std::size_t smallest = 0;
    for (std::size_t i = 0; i < used_; ++i) {
        if (hashes_[i] == h && entries_[i].tenant == tenant) {
            entries_[i].count += amount;
            return;
        }
        if (entries_[i].count < entries_[smallest].count) smallest = i;
    }
    if (used_ < k_) {
        if (used_ == entries_.size()) {
            entries_.emplace_back();
            hashes_.push_back(0);
        }
        Entry& e = entries_[used_];
        e.tenant.assign(tenant);  // reuses the slot's buffer after a clear()
        e.count = amount;
        e.error = 0;
        hashes_[used_] = h;
        ++used_;
        return;
    }
    // The tenant may have been counted before and evicted: it had at most the smallest count.
    Entry& e = entries_[smallest];
    e.tenant.assign(tenant);
    e.error = e.count;
    e.count += amount;
    hashes_[smallest] = h;
}

void SpaceSaving::clear() noexcept {
    used_ = 0;
    total_ = 0;
}

std::uint64_t SpaceSaving::floor() const noexcept {
    if (used_ < k_ || used_ == 0) return 0;
    std::uint64_t m = entries_[0].count;
    for (std::size_t i = 1; i < used_; ++i) m = std::min(m, entries_[i].count);
    return m;
}

}  // namespace ratelimitd::service
