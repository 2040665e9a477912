// The heavy hitters of the quota service (RLQS): per rule, the buckets with the most demand
// and the most denied requests, as Envoys report them.
#pragma once

#include "ratelimitd/policy/rlqs_rules.hpp"
#include "ratelimitd/service/thread_top.hpp"
#include "ratelimitd/service/top_merge.hpp"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::service {

/// One rule's merged ranking of buckets.
struct RuleTop {
    std::string domain;
    std::string rule;
    std::vector<RankedTenant> buckets;  ///< `tenant` is the bucket's rendering
};

/// What a bucket is ranked by: its demand (allowed + denied reported) or its denied requests.
enum class BucketBy { demand, denied };

/// Bucket ids are client-shaped: any key/value pairs a filter builds. So a bucket is kept
/// under a bounded rendering of its id (render_bucket) in the same ring of Space-Saving
/// sketches as a thread's heavy hitters (ThreadTop: `top_window` in 5 slices, `top_k`
/// buckets per sketch), one ring per matched rule (the config bounds how many), never per
/// domain or bucket a client names. Memory is therefore per rule, whatever the number of
/// distinct buckets reported, and recording one bucket costs a scan of K slots.
///
/// Reports are answered on gRPC's threads, not the server threads of a ThreadTop: one mutex
/// guards the ring, held for one bucket's record or one read's copy. Nothing is sampled (a
/// bucket report sums a reporting interval of requests).
/// @par Thread Safety
/// Thread-safe.
class BucketTop {
public:
    /// The longest rendering kept; a longer one is cut (at a UTF-8 boundary) and ends in "...".
    static constexpr std::size_t max_rendering_bytes = 128;

    BucketTop(const TopOptions& options, TopBoard& board);

    /// Adds one bucket report of `rule` (of `domain`): `allowed` + `denied` to its demand,
    /// `denied` to its denials. Each figure is taken at most `cap` (a client's figure may be
    /// anything up to UINT64_MAX).
    void record(std::string_view domain, std::string_view rule, const policy::RlqsBucketId& bucket,
                std::uint64_t allowed, std::uint64_t denied, std::uint64_t cap);

    /// The `n` largest of `by` per rule of `domain` (nullopt: every domain), or of its `rule`
    /// alone, by domain and rule name.
    [[nodiscard]] std::vector<RuleTop> ranking(const std::optional<std::string>& domain,
                                               const std::optional<std::string>& rule, BucketBy by,
                                               std::size_t n) const;

    /// How many bucket entries the live slices hold (both rankings): at most
    /// rules recorded x slices x 2 x K, whatever was reported.
    [[nodiscard]] std::size_t kept() const;

    /// "key=value,key=value" in key order, at most max_rendering_bytes.
    static std::string render_bucket(const policy::RlqsBucketId& bucket);

private:
    static TopOptions unsampled(TopOptions options);

    mutable std::mutex mutex_;
    ThreadTop top_;  // keyed by domain '\x1f' rule
};

}  // namespace ratelimitd::service
