// The share ledger of RLQS budgets for the store the settings name.
#pragma once

#include "ratelimitd/app/settings.hpp"
#include "ratelimitd/store/share_ledger.hpp"

#include <memory>

namespace ratelimitd::app {

/// A ledger on the store's Redis, with the store's deadline per report: one Redis (redis://,
/// rediss://), the primary its sentinels name (redis-sentinel://), or a Redis Cluster
/// (redis-cluster://, each bucket on its slot's primary); null for the embedded store, whose
/// budgets stay each replica's own (docs/rlqs.md, said in a log line).
std::shared_ptr<store::ShareLedger> open_rlqs_shares(const Settings& settings);

}  // namespace ratelimitd::app
