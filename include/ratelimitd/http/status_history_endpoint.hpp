// GET /v1/status/history: the status page's last 15 minutes as JSON (an admin endpoint).
#pragma once

#include "ratelimitd/service/status_history.hpp"

#include <string>
#include <vector>

namespace ratelimitd::http {

/// {"interval_seconds","capacity","verdicts","samples":[{"at" (Unix ms),"seconds","checks":{verdict: n},
/// "denied":{policy: n, "(other)": n},"store":{"calls","p50_ms","p99_ms","errors"},
/// "webhooks":{"sent","dropped"},"held"}]}: counts per sample, oldest first (docs/operations.md).
/// At most StatusHistory::capacity samples of at most status_top_policies + 1 policies each:
/// the answer's size is bounded whatever the traffic.
std::string status_history_json(const std::vector<service::StatusSample>& samples);

}  // namespace ratelimitd::http
