// How long each bucket of one stream has been reported without a request.
#pragma once

#include "ratelimitd/policy/rlqs_rules.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace ratelimitd::rls {

/// Adds up the time_elapsed of a bucket's reports with no request in them (allowed and denied
/// 0: Envoy keeps reporting a bucket it no longer uses), so the bucket can be abandoned once it
/// has been quiet for its rule's idle_after and Envoy frees it. Time is the reports' own
/// (time_elapsed), so a report that arrives late counts as the time it covers. Buckets are
/// kept by a 64-bit hash of their id (a collision only merges two buckets' quiet time), at
/// most max_tracked of them; one more is never found idle.
/// @par Thread Safety
/// One stream's: used by one read completion at a time.
class IdleBuckets {
public:
    static constexpr std::size_t max_tracked = 1'000;

    /// Counts one report of `id`; true when it has now been quiet for at least `idle_after`
    /// (the bucket is forgotten: its next report starts afresh).
    bool quiet_for(const policy::RlqsBucketId& id, bool used, std::chrono::milliseconds elapsed,
                   std::chrono::milliseconds idle_after);

private:
    static std::uint64_t hash_of(const policy::RlqsBucketId& id) noexcept;

    std::unordered_map<std::uint64_t, std::chrono::milliseconds> quiet_;
};

}  // namespace ratelimitd::rls
