// read_quota_report: a usage report into sorted bucket ids, within the door's bounds.
#include "ratelimitd/grpc/quota_report.hpp"

#include <algorithm>
#include <optional>

namespace ratelimitd::rls {

namespace {

using envoy::service::rate_limit_quota::v3::BucketId;

/// The id sorted by key, or nothing when it is empty or past a bound (a protobuf map has
/// unique keys, so sorting leaves no duplicate).
std::optional<policy::RlqsBucketId> read_bucket_id(const BucketId& wire, const QuotaReportBounds& bounds) {
    const auto& pairs = wire.bucket();
    if (pairs.empty() || static_cast<std::size_t>(pairs.size()) > bounds.max_pairs_per_bucket) return std::nullopt;
    policy::RlqsBucketId id;
    id.reserve(static_cast<std::size_t>(pairs.size()));
    for (const auto& [key, value] : pairs) {
        if (key.empty() || key.size() > bounds.max_key_bytes) return std::nullopt;
        if (value.empty() || value.size() > bounds.max_value_bytes) return std::nullopt;
        id.emplace_back(key, value);
    }
    std::sort(id.begin(), id.end());
    return id;
}

/// time_elapsed in milliseconds, within [0, 1 day]: a client's value can neither go back nor
/// overflow a sum.
std::chrono::milliseconds elapsed_of(const google::protobuf::Duration& d) {
    constexpr std::int64_t day_s = 86'400;
    if (d.seconds() < 0 || d.nanos() < 0) return std::chrono::milliseconds{0};
    if (d.seconds() >= day_s) return std::chrono::milliseconds{day_s * 1000};
    return std::chrono::milliseconds{d.seconds() * 1000 + d.nanos() / 1'000'000};
}

}  // namespace

QuotaReport read_quota_report(const envoy::service::rate_limit_quota::v3::RateLimitQuotaUsageReports& wire,
                              const QuotaReportBounds& bounds) {
    QuotaReport report;
    const auto total = static_cast<std::size_t>(wire.bucket_quota_usages_size());
    if (wire.domain().empty() || wire.domain().size() > bounds.max_domain_bytes) {
        report.left_out = total;
        return report;
    }
    report.domain = wire.domain();
    const std::size_t kept = std::min(total, bounds.max_buckets_per_report);
    report.left_out = total - kept;
    report.buckets.reserve(kept);
    for (std::size_t i = 0; i < kept; ++i) {
        const auto& usage = wire.bucket_quota_usages(static_cast<int>(i));
        auto id = read_bucket_id(usage.bucket_id(), bounds);
        if (!id) {
            ++report.left_out;
            continue;
        }
        report.buckets.push_back({std::move(*id), &usage.bucket_id(), usage.num_requests_allowed(),
                                  usage.num_requests_denied(), elapsed_of(usage.time_elapsed())});
    }
    return report;
}

}  // namespace ratelimitd::rls
