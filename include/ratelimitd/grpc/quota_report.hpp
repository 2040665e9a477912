// A usage report of Envoy's rate_limit_quota filter, checked against the door's bounds.
#pragma once

#include "ratelimitd/policy/rlqs_rules.hpp"

#include "envoy/service/rate_limit_quota/v3/rlqs.pb.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ratelimitd::rls {

/// What one report may hold; past them entries are left out, never an error (on this door an
/// error would be Envoy's to admit, and a client shapes its reports). Envoy's own buckets
/// stay far inside: a bucket id is built from a few request attributes.
struct QuotaReportBounds {
    std::size_t max_buckets_per_report = 100;
    std::size_t max_pairs_per_bucket = 16;
    std::size_t max_key_bytes = policy::rlqs_bounds::max_key_bytes;
    std::size_t max_value_bytes = policy::rlqs_bounds::max_value_bytes;
    std::size_t max_domain_bytes = policy::rlqs_bounds::max_value_bytes;
};

/// One bucket's usage as reported.
struct ReportedBucket {
    policy::RlqsBucketId id;  ///< sorted by key
    const envoy::service::rate_limit_quota::v3::BucketId* wire_id;  ///< to answer with, as sent
    std::uint64_t allowed = 0;
    std::uint64_t denied = 0;
    std::chrono::milliseconds elapsed{0};  ///< time_elapsed, 0 when negative, at most a day
};

/// A report's usable part.
struct QuotaReport {
    std::string domain;
    std::vector<ReportedBucket> buckets;
    /// Entries left out: an empty or oversized bucket id, or past max_buckets_per_report.
    std::size_t left_out = 0;
};

/// Reads `wire` (which must outlive the result: wire_id points into it). An empty or
/// oversized domain leaves every bucket out (the filter always sends its domain).
QuotaReport read_quota_report(const envoy::service::rate_limit_quota::v3::RateLimitQuotaUsageReports& wire,
                              const QuotaReportBounds& bounds);

}  // namespace ratelimitd::rls
