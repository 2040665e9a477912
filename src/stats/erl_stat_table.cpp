// ErlStatTable: counters in fixed chunks (so readers never see one move), names in maps
// behind a mutex taken only to make one.
#include "ratelimitd/stats/erl_stat_table.hpp"

namespace ratelimitd::stats {

namespace {

constexpr std::string_view prefix = "ratelimit.service.rate_limit.";

}  // namespace

ErlStatTable::ErlStatTable(std::size_t max_keys, std::size_t max_value_keys)
    : max_keys_(max_keys),
      max_value_keys_(max_value_keys),
      // Five counters a key, and room for the service's own.
      chunk_count_((max_keys * DescriptorCounters::suffixes.size() + 16) / chunk_size + 1) {
    chunks_ = std::make_unique<std::atomic<ErlCounter*>[]>(chunk_count_);
}

ErlStatTable::~ErlStatTable() {
    for (std::size_t c = 0; c < chunk_count_; ++c) delete[] chunks_[c].load(std::memory_order_relaxed);
}

const ErlCounter& ErlStatTable::at(std::size_t i) const noexcept {
    return chunks_[i / chunk_size].load(std::memory_order_acquire)[i % chunk_size];
}

ErlCounter* ErlStatTable::make_counter(std::string name) {
    const std::size_t i = size_.load(std::memory_order_relaxed);
    auto& chunk = chunks_[i / chunk_size];
    if (chunk.load(std::memory_order_relaxed) == nullptr) chunk.store(new ErlCounter[chunk_size], std::memory_order_release);
    ErlCounter* c = &chunk.load(std::memory_order_relaxed)[i % chunk_size];
    c->name = std::move(name);
    size_.store(i + 1, std::memory_order_release);  // published whole: readers see the name
    return c;
}

bool ErlStatTable::admit(KeyOrigin origin) {
    if (keys_ >= max_keys_ || (origin == KeyOrigin::values && value_keys_ >= max_value_keys_)) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    ++keys_;
    if (origin == KeyOrigin::values) ++value_keys_;
    return true;
}

const DescriptorCounters* ErlStatTable::descriptor(std::string_view path, KeyOrigin origin) {
    std::lock_guard lock(mu_);
    if (auto it = by_path_.find(std::string(path)); it != by_path_.end()) return it->second;
    if (!admit(origin)) return nullptr;
    DescriptorCounters& d = descriptors_.emplace_back();
    for (std::size_t s = 0; s < d.counters.size(); ++s) {
        std::string name;
        name.reserve(prefix.size() + path.size() + 1 + DescriptorCounters::suffixes[s].size());
        name.append(prefix).append(path).append(".").append(DescriptorCounters::suffixes[s]);
        d.counters[s] = make_counter(std::move(name));
    }
    by_path_.emplace(std::string(path), &d);
    return &d;
}

ErlCounter* ErlStatTable::counter(std::string_view name, KeyOrigin origin) {
    std::lock_guard lock(mu_);
    if (auto it = by_name_.find(std::string(name)); it != by_name_.end()) return it->second;
    if (!admit(origin)) return nullptr;
    ErlCounter* c = make_counter(std::string(name));
    by_name_.emplace(std::string(name), c);
    return c;
}

}  // namespace ratelimitd::stats
