// QuotaAnswerer: a report's buckets matched to the registry's rlqs: rules, budgets split
// across the fleet by the share ledger when there is one.
#include "ratelimitd/grpc/quota_answerer.hpp"

#include "ratelimitd/grpc/quota_assignment.hpp"
#include "ratelimitd/grpc/share_ask.hpp"
#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/service/top_board.hpp"

#include <algorithm>

namespace ratelimitd::rls {

namespace {

/// A budget (not a blanket rule, not shadowed): what the ledger splits.
bool budgeted(const policy::RlqsRule& rule) { return !rule.shadow && rule.blanket == policy::RlqsBlanket::none; }

/// The most a bucket report's allowed or denied adds to the heavy hitters: the largest limit
/// a rule may have (a client's figure may be anything up to UINT64_MAX).
constexpr std::uint64_t max_figure = 4'294'967'295;

/// How one bucket of the report is answered, decided before the ledger is asked.
struct Decided {
    const ReportedBucket* bucket;
    const policy::RlqsRule* rule;  ///< null: abandoned
    bool shared = false;           ///< its share comes from the ledger's answer, in ask order
};

/// The rule's fallback while the ledger does not answer (never an error on the stream: that
/// would be Envoy's to admit).
void answer_fallback(const policy::RlqsRule& rule, const envoy::service::rate_limit_quota::v3::BucketId& id,
                     envoy::service::rate_limit_quota::v3::RateLimitQuotaResponse& out) {
    switch (rule.fallback) {
    case policy::RlqsFallback::keep_last: return;  // no action: Envoy keeps its last assignment
    case policy::RlqsFallback::deny:
        assign_quota(rule, 0, id, *out.add_bucket_action(), QuotaGrant::fleet_share);  // a share of 0: DENY_ALL
        return;
    case policy::RlqsFallback::local_share:
        assign_quota(rule, static_cast<std::uint64_t>(std::max<std::int64_t>(1, rule.limit / rule.expected_envoys)), id,
                     *out.add_bucket_action());
        return;
    }
}

}  // namespace

void QuotaAnswerer::answer(const envoy::service::rate_limit_quota::v3::RateLimitQuotaUsageReports& wire,
                           envoy::service::rate_limit_quota::v3::RateLimitQuotaResponse& out, IdleBuckets& idle,
                           const std::string& envoy) const {
    const QuotaReport report = read_quota_report(wire, bounds_);
    metrics_.count_report(report.left_out);
    if (report.buckets.empty()) return;
    // One snapshot for the whole report: a reload between two buckets cannot split it.
    const auto& road = lanes_.next().road;
    const auto registry = road.registry();
    service::TopBoard* board = road.top_board();  // null: heavy hitters off (top_k 0)
    const policy::RlqsRules* rules = registry ? registry->rlqs.get() : nullptr;
    std::vector<Decided> decided;
    decided.reserve(report.buckets.size());
    std::vector<store::ShareAsk> asks;
    for (const ReportedBucket& bucket : report.buckets) {
        const policy::RlqsRule* rule = rules ? rules->find(report.domain, bucket.id) : nullptr;
        const bool used = bucket.allowed > 0 || bucket.denied > 0;
        if (rule != nullptr && idle.quiet_for(bucket.id, used, bucket.elapsed, rule->idle_after)) rule = nullptr;
        if (rule != nullptr && board != nullptr) {
            board->buckets().record(report.domain, rule->name, bucket.id, bucket.allowed, bucket.denied, max_figure);
        }
        const bool shared = rule != nullptr && shares_ != nullptr && budgeted(*rule);
        if (shared) asks.push_back(share_ask(report.domain, *rule, bucket, envoy));
        decided.push_back({&bucket, rule, shared});
    }
    // One pipeline for the whole report (RedisShareLedger); nothing when no budget is shared.
    std::optional<std::vector<store::ShareGrant>> grants;
    if (!asks.empty()) {
        grants = shares_->take(asks);
        metrics_.count_shares(asks.size(), grants.has_value());
    }
    std::size_t next_grant = 0;
    for (const Decided& d : decided) {
        if (d.rule == nullptr) {
            abandon_bucket(*d.bucket->wire_id, *out.add_bucket_action());
            metrics_.count_abandon();
            continue;
        }
        if (!d.shared) {
            // No shared store: the rule's whole budget, each replica's own (docs/rlqs.md).
            assign_quota(*d.rule, static_cast<std::uint64_t>(d.rule->limit), *d.bucket->wire_id,
                         *out.add_bucket_action());
            metrics_.count_assignment();
            continue;
        }
        const std::size_t at = next_grant++;
        if (!grants) {
            metrics_.count_rule_share(report.domain, d.rule->name, nullptr);
            answer_fallback(*d.rule, *d.bucket->wire_id, out);
            continue;
        }
        const store::ShareGrant& grant = (*grants)[at];
        metrics_.count_rule_share(report.domain, d.rule->name, &grant.used);
        assign_quota(*d.rule, grant.grant, *d.bucket->wire_id, *out.add_bucket_action(), QuotaGrant::fleet_share);
        metrics_.count_assignment();
    }
}

}  // namespace ratelimitd::rls
