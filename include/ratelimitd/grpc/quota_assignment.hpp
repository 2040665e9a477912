// The action a bucket's rule asks of Envoy, as a BucketAction.
#pragma once

#include "ratelimitd/policy/rlqs_rules.hpp"

#include "envoy/service/rate_limit_quota/v3/rlqs.pb.h"

#include <cstdint>

namespace ratelimitd::rls {

using QuotaBucketAction = envoy::service::rate_limit_quota::v3::RateLimitQuotaResponse::BucketAction;

/// What a budget's `share` is: the rule's whole limit (no shared store: each replica's own),
/// or this Envoy's share of the fleet's budget until its next report.
enum class QuotaGrant { whole_limit, fleet_share };

/// Fills `action` for the bucket `id` under `rule`: a blanket rule (and a shadow one, which
/// only counts) as blanket_rule, a budget as `share` requests per window in the rule's
/// strategy, each with the rule's assignment_time_to_live.
void assign_quota(const policy::RlqsRule& rule, std::uint64_t share,
                  const envoy::service::rate_limit_quota::v3::BucketId& id, QuotaBucketAction& action,
                  QuotaGrant grant = QuotaGrant::whole_limit);

/// Fills `action` with abandon_action for `id`: no rule names the bucket.
void abandon_bucket(const envoy::service::rate_limit_quota::v3::BucketId& id, QuotaBucketAction& action);

}  // namespace ratelimitd::rls
