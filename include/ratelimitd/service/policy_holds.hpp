// Per policy: the /v1/auth answers it holds now (bounded by its max_held) and the delayed
// checks refused because a bound was reached, by which bound (ratelimitd_held_refused_total).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace ratelimitd::service {

/// Which bound refused a delayed check.
enum class HeldBound { process, policy };

/// One counter set per policy name, made on a policy's first delayed /v1/auth answer and
/// never dropped (a held slot points at it): at most one per delaying policy ever loaded.
/// @par Thread Safety
/// Every member may be called from any thread; counters are atomics, the map is locked.
class PolicyHolds {
public:
    struct Counts {
        std::atomic<std::int64_t> held{0};
        std::atomic<std::uint64_t> refused_by_process{0};
        std::atomic<std::uint64_t> refused_by_policy{0};
    };

    /// `policy`'s counters (made on first use; the reference stays valid for good).
    Counts& of(std::string_view policy);

    /// ratelimitd_held_refused_total{policy,bound} lines (no # HELP: the caller's family).
    void render_refused(std::string& out) const;

private:
    mutable std::mutex mu_;
    std::map<std::string, Counts, std::less<>> counts_;
};

}  // namespace ratelimitd::service
