// A bounded top-K of tenants (the Space-Saving algorithm of Metwally, Agrawal and El Abbadi).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::service {

/// Counts at most K tenants. While fewer than K were seen, every count is exact (error 0).
/// Then a new tenant takes the place of the smallest count m and starts at m + amount, with
/// error m: each kept count is an upper bound, and count - error a lower bound, of the
/// tenant's true sum; the error is at most total() / K, so any tenant whose true sum exceeds
/// total() / K is kept.
///
/// Lookup scans the K slots (hashes first): with K in the tens that is a few cache lines,
/// cheaper than a hash map and never allocating once the slots have held their tenants.
/// @par Thread Safety
/// Not thread-safe: one per server thread.
class SpaceSaving {
public:
    struct Entry {
        std::string tenant;
        std::uint64_t count = 0;  ///< upper bound of the tenant's true sum
        std::uint64_t error = 0;  ///< count - error is a lower bound
    };

    explicit SpaceSaving(std::size_t k) : k_(k) {}

    /// Adds `amount` to `tenant`'s sum.
    void add(std::string_view tenant, std::uint64_t amount);
    /// Forgets every tenant; keeps the slots' memory for the next use.
    void clear() noexcept;

    [[nodiscard]] std::span<const Entry> entries() const noexcept { return {entries_.data(), used_}; }
    [[nodiscard]] std::size_t capacity() const noexcept { return k_; }
    /// What a tenant that is not kept may have had: the smallest count once all K slots are
    /// taken, else 0 (every tenant seen is kept).
    [[nodiscard]] std::uint64_t floor() const noexcept;
    /// The sum of every amount added since the last clear().
    [[nodiscard]] std::uint64_t total() const noexcept { return total_; }

private:
    std::size_t k_;
    std::size_t used_ = 0;
    std::uint64_t total_ = 0;
    std::vector<Entry> entries_;        // the first used_ are live
    std::vector<std::size_t> hashes_;   // of entries_[i].tenant
};

}  // namespace ratelimitd::service
