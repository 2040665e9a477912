// A reported bucket as a question to the fleet's share ledger.
#pragma once

#include "ratelimitd/grpc/quota_report.hpp"
#include "ratelimitd/policy/rlqs_rules.hpp"
#include "ratelimitd/store/share_ledger.hpp"

#include <string>
#include <string_view>

namespace ratelimitd::rls {

/// The ledger key of (domain, rule, bucket id): "ratelimitd:rlqs:{<64-bit hash, hex>}", the
/// whole name a hash tag so every replica finds the bucket in one Redis Cluster slot. The
/// window is not in the key: lua/rlqs_share.lua keeps it in the hash, on Redis's clock.
std::string share_key(std::string_view domain, const policy::RlqsRule& rule, const policy::RlqsBucketId& id);

/// What `envoy` asks the ledger for `bucket` under `rule`.
store::ShareAsk share_ask(std::string_view domain, const policy::RlqsRule& rule, const ReportedBucket& bucket,
                          const std::string& envoy);

}  // namespace ratelimitd::rls
