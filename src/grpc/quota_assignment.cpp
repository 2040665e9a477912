// assign_quota and abandon_bucket: a rule's answer in Envoy's terms.
#include "ratelimitd/grpc/quota_assignment.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

namespace ratelimitd::rls {

namespace {

using envoy::type::v3::RateLimitStrategy;
using namespace std::chrono_literals;

void set_duration(std::chrono::milliseconds d, google::protobuf::Duration& out) {
    out.set_seconds(d.count() / 1000);
    out.set_nanos(static_cast<std::int32_t>((d.count() % 1000) * 1'000'000));
}

envoy::type::v3::RateLimitUnit time_unit(std::chrono::milliseconds window) {
    // The section admits only these four with requests_per_time_unit.
    if (window == 1s) return envoy::type::v3::SECOND;
    if (window == 1min) return envoy::type::v3::MINUTE;
    if (window == 1h) return envoy::type::v3::HOUR;
    return envoy::type::v3::DAY;
}

void set_budget(const policy::RlqsRule& rule, std::uint64_t share, std::chrono::milliseconds fill_interval,
                RateLimitStrategy& strategy) {
    if (rule.strategy == policy::RlqsStrategy::requests_per_time_unit) {
        auto& rptu = *strategy.mutable_requests_per_time_unit();
        rptu.set_requests_per_time_unit(share);
        rptu.set_time_unit(time_unit(rule.window));
        return;
    }
    // max_tokens must be above 0 (Envoy refuses 0): a share of 0 is a deny_all instead.
    if (share == 0) {
        strategy.set_blanket_rule(RateLimitStrategy::DENY_ALL);
        return;
    }
    const auto tokens = static_cast<std::uint32_t>(std::min<std::uint64_t>(share, std::numeric_limits<std::uint32_t>::max()));
    auto& bucket = *strategy.mutable_token_bucket();
    bucket.set_max_tokens(tokens);
    bucket.mutable_tokens_per_fill()->set_value(tokens);
    set_duration(fill_interval, *bucket.mutable_fill_interval());
}

}  // namespace

void assign_quota(const policy::RlqsRule& rule, std::uint64_t share,
                  const envoy::service::rate_limit_quota::v3::BucketId& id, QuotaBucketAction& action,
                  QuotaGrant grant) {
    *action.mutable_bucket_id() = id;
    auto& assignment = *action.mutable_quota_assignment_action();
    set_duration(rule.assignment_ttl, *assignment.mutable_assignment_time_to_live());
    auto& strategy = *assignment.mutable_rate_limit_strategy();
    if (rule.shadow || rule.blanket == policy::RlqsBlanket::allow_all) {
        strategy.set_blanket_rule(RateLimitStrategy::ALLOW_ALL);
    } else if (rule.blanket == policy::RlqsBlanket::deny_all) {
        strategy.set_blanket_rule(RateLimitStrategy::DENY_ALL);
    } else {
        // A fleet share is refilled by itself once per TTL: whatever Envoy does with a new
        // assignment, it admits at most 2 x share before the next one (docs/rlqs.md, "The bound").
        set_budget(rule, share, grant == QuotaGrant::fleet_share ? rule.assignment_ttl : rule.window, strategy);
    }
}

void abandon_bucket(const envoy::service::rate_limit_quota::v3::BucketId& id, QuotaBucketAction& action) {
    *action.mutable_bucket_id() = id;
    action.mutable_abandon_action();
}

}  // namespace ratelimitd::rls
