// What a replay counts for one config: per policy, per denied tenant, per minute. Its memory
// grows with policies, denied tenants and minutes of the log, never with its lines.
#pragma once

#include "ratelimitd/simulate/delay_distribution.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ratelimitd::simulate {

/// One policy's totals.
struct PolicyTotals {
    std::uint64_t checked = 0;         ///< requests it took part in deciding
    std::uint64_t denied = 0;          ///< requests it denied (a shadow policy: would have denied)
    std::uint64_t tenants_denied = 0;  ///< distinct tenants it denied at least once
    /// max_delay: requests it admitted with a delay, and the delays' p50, p99 and max (ms).
    std::uint64_t delayed = 0;
    std::int64_t delay_p50_ms = 0;
    std::int64_t delay_p99_ms = 0;
    std::int64_t delay_max_ms = 0;
};

/// One tenant denied by one policy.
struct TenantDenial {
    std::string policy;
    std::string tenant;
    std::uint64_t denied = 0;
    std::int64_t first_denied_ms = 0;  ///< the log time of its first denial
};

/// One minute of the log (the lines logged in it).
struct MinuteTotals {
    std::int64_t minute_ms = 0;                      ///< its start, Unix epoch ms
    std::uint64_t requests = 0;
    std::map<std::string, std::uint64_t> denied;  ///< policy -> denials; only policies that denied
    std::uint64_t denied_requests = 0;  ///< requests the verdict denied (a shadow denial admits)
};

/// The finished count of one replay, ready to print.
struct Summary {
    std::uint64_t lines = 0;
    std::uint64_t requests = 0;
    std::uint64_t unparsed = 0;
    /// Requests no policy checked (no route matched, or a route without limits): the report's
    /// "not limited" row, so each request is counted somewhere.
    std::uint64_t unmatched = 0;
    std::uint64_t denied_requests = 0;  ///< requests the verdict denied
    std::uint64_t late = 0;  ///< lines logged more than the tolerance behind the clock
    std::map<std::string, PolicyTotals> policies;  ///< every policy of the config
    std::vector<TenantDenial> denials;             ///< most denied first (then earliest, names)
    std::vector<MinuteTotals> per_minute;          ///< the minutes that had requests, in order
};

/// Counts as lines are decided. Not thread-safe.
class Tally {
public:
    /// `policies`: the config's policy names, in the order they are reported.
    explicit Tally(const std::vector<std::string>& policies);

    /// A request logged at `time_ms`: counted in its minute, where checked() then counts.
    void request(std::int64_t time_ms);

    /// Policy number `policy` (an index into the constructor's list) took part in the last
    /// request, for `tenant`, and denied it or not.
    void checked(std::size_t policy, std::string_view tenant, bool denied, std::int64_t time_ms);

    /// The last request's end: no policy checked it (`limited` false), or its verdict denied it.
    void decided(bool limited, bool denied);

    /// Policy number `policy` admitted the last request with a delay of `delay_ms` (> 0).
    void delayed(std::size_t policy, std::int64_t delay_ms);

    /// The totals; lines/unparsed are the reader's, filled by the caller.
    [[nodiscard]] Summary summary() const;

private:
    struct Denial {
        std::uint64_t denied = 0;
        std::int64_t first_ms = 0;
    };

    std::vector<std::string> names_;
    std::vector<PolicyTotals> totals_;
    std::vector<std::unordered_map<std::string, Denial>> denials_;  ///< per policy, by tenant
    std::vector<DelayDistribution> delays_;                          ///< per policy
    std::map<std::int64_t, MinuteTotals> minutes_;
    MinuteTotals* minute_ = nullptr;  ///< the last request's minute
    std::int64_t minute_start_ = -1;
    std::uint64_t requests_ = 0;
    std::uint64_t unmatched_ = 0;
    std::uint64_t denied_requests_ = 0;
};

}  // namespace ratelimitd::simulate
