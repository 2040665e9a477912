// The counters envoyproxy/ratelimit's stats name, made on first use and kept for the
// process's life (as its stats store keeps them), with a bound on how many there may be.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ratelimitd::stats {

/// One named counter ("ratelimit.service.rate_limit.edge.user.total_hits"): its name is fixed
/// once made, its value only grows.
struct ErlCounter {
    std::string name;
    std::atomic<std::uint64_t> value{0};

    void add(std::uint64_t n) noexcept { value.fetch_add(n, std::memory_order_relaxed); }
};

/// The five counters of one descriptor key path, in envoyproxy/ratelimit's order.
struct DescriptorCounters {
    enum Stat : std::size_t { total_hits, over_limit, near_limit, within_limit, shadow_mode };
    static constexpr std::array<std::string_view, 5> suffixes{"total_hits", "over_limit", "near_limit",
                                                              "within_limit", "shadow_mode"};
    std::array<ErlCounter*, 5> counters{};

    void add(Stat s, std::uint64_t n) const noexcept {
        if (n != 0) counters[s]->add(n);
    }
};

/// Where a name comes from: the configured key path of a rule (bounded by the config), or a
/// value a client sent (detailed_metric, value_to_metric, a descriptor's own limit, an
/// unknown domain), which has a bound of its own.
enum class KeyOrigin { config, values };

/// Counters by name. Making one takes a mutex (once per name); counting is an atomic add on a
/// counter found before; readers walk them in the order made without a lock.
/// @par Thread Safety
/// Every member may be called from any thread.
class ErlStatTable {
public:
    /// At most `max_keys` descriptor key paths in all, of which at most `max_value_keys` from
    /// values; single counters (service ones, unknown domains) count as one key each.
    ErlStatTable(std::size_t max_keys, std::size_t max_value_keys);
    ~ErlStatTable();
    ErlStatTable(const ErlStatTable&) = delete;
    ErlStatTable& operator=(const ErlStatTable&) = delete;

    /// The counters of descriptor key path `path` ("edge.user"), made on first use; nullptr
    /// when a new one would pass its bound (the call is then counted in dropped()).
    const DescriptorCounters* descriptor(std::string_view path, KeyOrigin origin);
    /// The single counter `name` (the whole stat name), made on first use; nullptr past the bound.
    ErlCounter* counter(std::string_view name, KeyOrigin origin);

    /// How many counters exist; those below it may be read with at().
    [[nodiscard]] std::size_t size() const noexcept { return size_.load(std::memory_order_acquire); }
    [[nodiscard]] const ErlCounter& at(std::size_t i) const noexcept;
    /// Counts that found no counter because a bound was reached.
    [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

private:
    static constexpr std::size_t chunk_size = 256;
    ErlCounter* make_counter(std::string name);  // with mu_ held
    bool admit(KeyOrigin origin);                // with mu_ held: a new key within its bounds?

    const std::size_t max_keys_;
    const std::size_t max_value_keys_;
    // Chunks of counters, never moved: readers index them while a writer appends.
    std::unique_ptr<std::atomic<ErlCounter*>[]> chunks_;
    std::size_t chunk_count_;
    std::atomic<std::size_t> size_{0};
    std::atomic<std::uint64_t> dropped_{0};

    std::mutex mu_;  // guards what follows: taken only to make a name
    std::size_t keys_ = 0;
    std::size_t value_keys_ = 0;
    std::deque<DescriptorCounters> descriptors_;
    std::unordered_map<std::string, const DescriptorCounters*> by_path_;
    std::unordered_map<std::string, ErlCounter*> by_name_;
};

}  // namespace ratelimitd::stats
