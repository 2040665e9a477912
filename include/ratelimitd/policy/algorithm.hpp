// The algorithms, each described once: its enumerator and its row of algorithm_table. Every
// module that treats algorithms differently asks the row (traits(a).burst, ...), never
// `a == Algorithm::x`; only the embedded store's step of an algorithm names its own.
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::policy {

/// The algorithms, in the order of algorithm_table's rows. The build (cmake/embed_lua.cmake)
/// reads both: each enumerator must have its row, each row its script lua/NAME.lua, and each
/// row with a cluster refund a "refund" mode in that script (which lua/refund.lua runs).
enum class Algorithm { token_bucket, sliding_log, fixed_window, gcra, sliding_window, concurrency, erl_fixed_window };

/// What a check puts in the member argument of its algorithm's script (ARGV[5]).
enum class ScriptMember {
    none,      ///< nothing: the script ignores it
    per_unit,  ///< a member unique across sidecars: the script keeps one sorted-set member per unit
    lease,     ///< a fresh lease id (store/lease_id.hpp), handed to the client when admitted
    expiry,    ///< the key's TTL in seconds: the window's, plus a random jitter (Policy::expiration_jitter)
    /// the layout the script writes its state in: "hash" for the one earlier versions wrote,
    /// "" for its own (store::StateLayout, redis_state_layout); it reads both
    state_layout,
};

/// How the script's "refund" mode gives back a charge on a Redis Cluster (lua/refund.lua runs
/// it for a layered check whose later slot group denied; store/redis/cluster/cross_slot_check.cpp).
enum class ClusterRefund {
    none,      ///< it cannot (no refund mode): layered limits using it are refused on a cluster
    by_state,  ///< from the state and the member the charge sent
    by_reset,  ///< by the charge's reset_after_ms (sent as the member): a rolled-over window keeps it
};

/// The window a quota webhook's threshold is claimed once in (lua/notify/crossings.lua and the
/// embedded store's NotifyMarks read this row field; the build writes it into the scripts).
enum class NotifyWindow {
    own_counter,  ///< the algorithm's own counter window: it ends at the reply's reset, the count only rises in it
    aligned,      ///< the aligned window of the policy's window holding now: the level falls back (refill, sliding)
};

/// What an algorithm is, as every module needs to know it.
struct AlgorithmTraits {
    Algorithm algorithm;
    const char* name;   ///< in config files, replies and metrics; its script is lua/NAME.lua
    const char* prose;  ///< in messages: "token bucket"
    /// `burst:` is a setting: the capacity (and the largest cost) is burst, else limit.
    bool burst;
    /// Holds leases: `limit` and `lease:` instead of a window, one slot per check (max cost 1),
    /// freed by /v1/release; never in Envoy rules (Envoy asks once and never gives one back).
    bool leases;
    /// The scripts count in units of 1/window ms, in doubles: capacity x window_ms <= 2^53.
    bool ms_scaled;
    ScriptMember member;
    bool reports;  ///< POST /v1/report charges it (mode "report")
    bool refunds;  ///< a negative report gives units back
    ClusterRefund cluster_refund;
    /// A denial stays true until its reset, so the denial cache may keep it (a lease released
    /// early frees a slot long before).
    bool cacheable_denials;
    /// Its windows may start on the clock: `align: calendar`, and Envoy's aligned units.
    bool aligned;
    /// A limit of 0 denies every request (Envoy's requests_per_unit: 0).
    bool zero_limit;
    /// A config file may name it (`algorithm:`); false for one the planner alone chooses.
    bool configurable;
    NotifyWindow notify_window;
};

/// One row per Algorithm, in the enum's order (a missing member fails -Wmissing-field-initializers).
inline constexpr AlgorithmTraits algorithm_table[] = {
    {.algorithm = Algorithm::token_bucket, .name = "token_bucket", .prose = "token bucket", .burst = true,
     .leases = false, .ms_scaled = true, .member = ScriptMember::state_layout, .reports = true, .refunds = true,
     .cluster_refund = ClusterRefund::by_state, .cacheable_denials = true, .aligned = false, .zero_limit = false, .configurable = true,
     .notify_window = NotifyWindow::aligned},
    {.algorithm = Algorithm::sliding_log, .name = "sliding_log", .prose = "sliding log", .burst = false,
     .leases = false, .ms_scaled = false, .member = ScriptMember::per_unit, .reports = true, .refunds = false,
     .cluster_refund = ClusterRefund::by_state, .cacheable_denials = true, .aligned = false, .zero_limit = false, .configurable = true,
     .notify_window = NotifyWindow::aligned},
    {.algorithm = Algorithm::fixed_window, .name = "fixed_window", .prose = "fixed window", .burst = false,
     .leases = false, .ms_scaled = false, .member = ScriptMember::none, .reports = true, .refunds = true,
     .cluster_refund = ClusterRefund::by_reset, .cacheable_denials = true, .aligned = true, .zero_limit = true, .configurable = true,
     .notify_window = NotifyWindow::own_counter},
    {.algorithm = Algorithm::gcra, .name = "gcra", .prose = "GCRA", .burst = true,
     .leases = false, .ms_scaled = true, .member = ScriptMember::none, .reports = true, .refunds = true,
     .cluster_refund = ClusterRefund::by_state, .cacheable_denials = true, .aligned = false, .zero_limit = false, .configurable = true,
     .notify_window = NotifyWindow::aligned},
    // No cluster refund: the counter keeps counts per window and cannot tell which window a
    // charge went to once it rolled over.
    {.algorithm = Algorithm::sliding_window, .name = "sliding_window", .prose = "sliding window", .burst = false,
     .leases = false, .ms_scaled = true, .member = ScriptMember::none, .reports = true, .refunds = true,
     .cluster_refund = ClusterRefund::none, .cacheable_denials = true, .aligned = false, .zero_limit = false, .configurable = true,
     .notify_window = NotifyWindow::aligned},
    {.algorithm = Algorithm::concurrency, .name = "concurrency", .prose = "concurrency limit", .burst = false,
     .leases = true, .ms_scaled = false, .member = ScriptMember::lease, .reports = false, .refunds = false,
     .cluster_refund = ClusterRefund::by_state, .cacheable_denials = false, .aligned = false, .zero_limit = false, .configurable = true,
     .notify_window = NotifyWindow::aligned},
    // envoyproxy/ratelimit's own counting on its own keys (envoy_key_layout:
    // envoyproxy-ratelimit), chosen by the Envoy planner for a rule aligned to its unit: every
    // charge is INCRBY + EXPIRE, past the limit too, so denials are never cached, and nothing to
    // give back on a cluster (its charges are kept whatever another slot group answers).
    {.algorithm = Algorithm::erl_fixed_window, .name = "erl_fixed_window",
     .prose = "envoyproxy/ratelimit fixed window", .burst = false, .leases = false, .ms_scaled = false,
     .member = ScriptMember::expiry, .reports = false, .refunds = false, .cluster_refund = ClusterRefund::none,
     .cacheable_denials = false, .aligned = true, .zero_limit = true, .configurable = false,
     .notify_window = NotifyWindow::own_counter},
};
inline constexpr std::size_t algorithm_count = std::size(algorithm_table);

static_assert([] {
    for (std::size_t i = 0; i < algorithm_count; ++i) {
        if (algorithm_table[i].algorithm != static_cast<Algorithm>(i)) return false;
        if (algorithm_table[i].refunds && !algorithm_table[i].reports) return false;
    }
    return true;
}(), "algorithm_table: one row per Algorithm in the enum's order; refunds only with reports");

/// The row of `a`.
constexpr const AlgorithmTraits& traits(Algorithm a) noexcept { return algorithm_table[static_cast<std::size_t>(a)]; }

/// The name of `a` in config files ("token_bucket", ...).
const char* to_string(Algorithm a) noexcept;

/// The algorithm a config file names, or nothing.
std::optional<Algorithm> algorithm_named(std::string_view name) noexcept;

/// Every algorithm, in the table's order.
std::vector<Algorithm> all_algorithms();

/// Which rows a list keeps (a plain function, so a captureless lambda does).
using AlgorithmFilter = bool (*)(const AlgorithmTraits&);

/// The names of the configurable algorithms `keep` accepts (every one without it), in the
/// table's order.
std::vector<std::string_view> algorithm_names(AlgorithmFilter keep = nullptr);

/// Those names for a message: "token_bucket or gcra".
std::string algorithm_names_or(AlgorithmFilter keep);

}  // namespace ratelimitd::policy
