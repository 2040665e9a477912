// The share ledger of RLQS budgets for the store the settings name.
#pragma once

#include "ratelimitd/app/settings.hpp"
#include "ratelimitd/store/share_ledger.hpp"

#include <memory>

namespace ratelimitd::app {

/// A Redis ledger on the store's Redis (redis:// or rediss://, the store's deadline per report);
/// null for the embedded store and for Cluster and Sentinel URLs, whose budgets stay each
/// replica's own (docs/rlqs.md, said in a log line).
std::shared_ptr<store::ShareLedger> open_rlqs_shares(const Settings& settings);

}  // namespace ratelimitd::app
