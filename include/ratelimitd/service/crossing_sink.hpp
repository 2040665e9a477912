// Where a check's crossed webhook thresholds go once it is decided: the quota webhooks'
// queue (notify/notifier.hpp), kept behind this seam so the check path knows no HTTP client.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/notify_rule.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace ratelimitd::service {

/// One threshold crossed first in its window, or one debt bound passed first in it (the store
/// claimed it: once across the fleet).
struct Crossing {
    std::shared_ptr<const policy::NotifyRule> rule;  ///< its policy, thresholds and target
    double threshold = 0;                            ///< the fraction crossed (1.0: the first denial)
    std::string tenant;
    std::string scope;
    std::int64_t limit = 0;
    std::int64_t used = 0;           ///< limit - remaining after the check
    std::int64_t window_end_ms = 0;  ///< epoch ms
    /// A debt event ("type":"debt") when > 0: the debt a report left, in units past the limit,
    /// which passed rule->debt; threshold and used then mean nothing.
    std::int64_t debt = 0;
    std::string plan{};              ///< the tenant's plan; "" when it has none
    std::string window_name{};       ///< the window that crossed: its IETF item name ("api-1m")
    std::int64_t window_s = 0;       ///< that window's length in seconds
    std::int64_t crossed_at_ms = 0;  ///< the store's clock at the claim, epoch ms
};

/// Takes crossings without waiting. Implementations are thread-safe.
class CrossingSink {
public:
    virtual ~CrossingSink() = default;

    /// Queues the event of `c` for delivery and returns at once; a full queue drops it (and
    /// counts it). Never throws, never blocks on I/O.
    virtual void offer(Crossing c) noexcept = 0;

    /// POST /v1/notify/test: delivers one sample event to `target` now, once, without retries,
    /// and completes with the receiver's HTTP status, or a Problem saying why there is none
    /// (never naming the secret).
    virtual boost::asio::awaitable<result<unsigned>> send_sample(std::shared_ptr<const policy::NotifyTarget> target) = 0;
};

}  // namespace ratelimitd::service
