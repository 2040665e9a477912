// The policy registry as immutable values: policies, routes, and the settings that travel
// with them in the config file.
#pragma once

#include "ratelimitd/config/settings.hpp"
#include "ratelimitd/core/calendar.hpp"
#include "ratelimitd/policy/algorithm.hpp"
#include "ratelimitd/policy/notify_rule.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::policy {

/// What a policy answers when the store fails or times out.
enum class OnStoreError { allow, deny };

/// One named limit: one window (limit, window, burst), or several (`windows`) decided
/// together.
struct Policy {
    std::string name;
    Algorithm algorithm = Algorithm::token_bucket;
    std::int64_t limit = 0;                  ///< units per window (token bucket: refill per window)
    std::chrono::milliseconds window{0};     ///< window length (token bucket: refill period)
    std::int64_t burst = 0;                  ///< token bucket / GCRA capacity; equals limit elsewhere
    OnStoreError on_store_error = OnStoreError::allow;
    /// Evaluate and count as usual, report the numbers, but never deny (rolling out a limit).
    bool shadow = false;
    /// `align: calendar` (fixed_window only): the window is this calendar period on the wall
    /// clock `utc_offset_minutes` east of UTC (`utc_offset: "+02:00"`); absent: a window opens
    /// at its first check. `window` then holds the period's nominal length (a month 30d).
    std::optional<CalendarUnit> calendar;
    std::int32_t utc_offset_minutes = 0;
    /// Windows longer than a day were confirmed (`long_ttl: true`): their keys outlive a day.
    bool long_ttl = false;
    /// A multi-window policy (`windows:`): one single-window policy per window, same
    /// algorithm, named by its IETF item name (e.g. "api-1m"), in file order. The fields
    /// above then hold the first window's numbers. Empty for a single-window policy.
    std::vector<Policy> windows;
    /// Whose limits these are: empty for the policy's own, a plan's name, or
    /// tenant_override_label for one tenant's override. Part of the key (see key_name()).
    std::string plan;
    /// concurrency only (`lease: 30s`): how long an unreleased lease holds its slot. `window`
    /// holds the same span, which is what the scripts and headers read (docs/leases.md).
    std::chrono::milliseconds lease{0};
    /// `max_debt:` how many units a report may charge beyond what the limit admits (debt,
    /// repaid by time); absent: the limit. The config loader bounds it (limits_section.cpp).
    std::optional<std::int64_t> max_debt;
    /// `max_delay:` (token_bucket, gcra): a check that would be admitted within this span is
    /// admitted now with a delay (reserved at once: docs/policies.md "Delaying"); absent: none.
    std::optional<std::chrono::milliseconds> max_delay;
    /// `delay: N` (nginx limit_req's delay=): of the `burst` written, the first N pass at once
    /// and the rest are delayed; `burst` then holds N and queued_tokens the rest.
    std::optional<std::int64_t> delay_at_once;
    std::int64_t queued_tokens = 0;
    /// `max_held:` (with max_delay or delay): /v1/auth answers of this policy held at once in
    /// one process, beside max_held_requests; one more delayed check is denied. Absent: only
    /// the process bound.
    std::optional<std::int64_t> max_held;
    /// How far below empty a check may reserve, in the scripts' units (1/window of a unit,
    /// `limit` of them refilled per ms): max_delay's ms * limit, or queued_tokens * window.
    /// 0: the policy never delays (and its checks cost nothing more).
    std::int64_t queue_units = 0;
    /// erl_fixed_window only: the most seconds of jitter added to each charge's EXPIRE
    /// (envoy_expiration_jitter, envoyproxy/ratelimit's EXPIRATION_JITTER_MAX_SECONDS).
    std::chrono::seconds expiration_jitter{0};
    /// `notify.policies.NAME`: the thresholds that send a quota webhook; null: none (the
    /// store then sends nothing extra for its checks).
    std::shared_ptr<const NotifyRule> notify;

    /// The largest cost a single check can ever be admitted with: 1 for an algorithm holding
    /// leases (a lease is one slot, docs/leases.md), else its capacity; the smallest of these
    /// over several windows. A larger cost is rejected with invalid_cost.
    [[nodiscard]] std::int64_t max_cost() const noexcept {
        if (!windows.empty()) {
            std::int64_t most = windows.front().max_cost();
            for (const auto& w : windows) most = w.max_cost() < most ? w.max_cost() : most;
            return most;
        }
        return traits(algorithm).leases ? 1 : capacity();
    }

    /// What a full state holds: burst where it is a setting of the algorithm, else limit.
    [[nodiscard]] std::int64_t capacity() const noexcept { return has_burst() ? burst : limit; }

    /// The deepest debt a report may leave, in units: `max_debt`, or the limit by default.
    [[nodiscard]] std::int64_t debt_bound() const noexcept { return max_debt ? *max_debt : limit; }

    /// The policy part of its keys: "api-default", or "api-default@pro" under plan "pro", so
    /// counts kept under one plan's numbers never meet another plan's (README "Plans").
    [[nodiscard]] std::string key_name() const { return plan.empty() ? name : name + "@" + plan; }

    /// Whether `burst` is a setting of this algorithm (token bucket, GCRA).
    [[nodiscard]] bool has_burst() const noexcept { return traits(algorithm).burst; }
};

/// Policy::plan of a tenant's own override (`tenants: {t: {overrides: ...}}`); no plan may
/// take this name.
inline constexpr const char* tenant_override_label = "tenant";

/// Name of the pseudo-policy that routes use to mean "not limited".
inline constexpr const char* no_policy = "none";

/// Name a route limit uses for "the client address" whether or not `identity` lists it.
inline constexpr const char* client_ip_identity = "client_ip";

/// One limit of a route: a policy, and whose budget it spends.
struct RouteLimit {
    std::string policy;                   ///< a defined policy (never "none")
    /// The identity source (by name) that names the tenant on /v1/auth; absent: the whole
    /// `identity` list in order. A source that names nobody falls back to the client address.
    std::optional<std::string> identity;
};

/// One line of the route table; the first route that matches wins.
struct Route {
    std::optional<std::string> method;  ///< upper-case; absent matches any method
    /// A normalised path (normalize_path(path) == path): exact, with an optional trailing
    /// slash, or a prefix when it ends with '*'. Matched against the normalised request path.
    std::string path;
    std::string policy;                 ///< a policy name, or "none"; with limits: the first one's
    std::optional<std::string> scope;   ///< scope to use when the request names none
    /// Every limit the route applies, decided together (`limits:`); `policy: X` is one limit
    /// with no identity. Empty for "none".
    std::vector<RouteLimit> limits;
    /// Match letters of the path in either case (`case_insensitive:`, else the registry's
    /// default). The key does not change: "/LOGIN" and "/login" spend one budget.
    bool case_insensitive = false;
};

/// How a client address becomes a tenant: the network of this many leading bits. At the full
/// length (32, 128) the tenant is the address itself ("ip:192.0.2.1"), else the network
/// ("ip:2001:db8:1:2::/64", "ip:10.1.0.0/16"). IPv6 defaults to /64, what one home line or
/// one cloud machine is given, so rotating addresses inside it buys no fresh budget.
struct ClientIpPrefixes {
    int ipv4 = 32;  ///< `ipv4_prefix:` 16..32
    int ipv6 = 64;  ///< `ipv6_prefix:` 32..128
};

/// Ranges of `ipv4_prefix` and `ipv6_prefix`: wider networks than these hold unrelated
/// customers (a /8 is a continent's share; a /32 of IPv6 is a whole provider).
namespace client_ip_bounds {
inline constexpr int ipv4_lo = 16;
inline constexpr int ipv4_hi = 32;
inline constexpr int ipv6_lo = 32;
inline constexpr int ipv6_hi = 128;
}  // namespace client_ip_bounds

/// One identity source for /v1/auth, tried in order (docs/proxies.md).
struct IdentitySource {
    enum class Kind { header, client_ip };
    Kind kind = Kind::header;
    std::string header;    ///< header name, for Kind::header
    bool hash = false;     ///< the header carries a secret: only its keyed hash reaches a key
    /// What route limits call it (`identity: api_key`); "client_ip" for the client address,
    /// empty for an unnamed header source.
    std::string name;
    ClientIpPrefixes prefixes;  ///< for Kind::client_ip
};

/// An IPv4 or IPv6 network, e.g. 127.0.0.1/32 or ::1/128.
struct Cidr {
    bool v6 = false;
    std::array<std::uint8_t, 16> bytes{};  ///< network address, v4 in the first 4 bytes
    int prefix_len = 0;
};

/// Per-plan limits: policy name -> that policy with the plan's numbers (Policy::plan set).
struct Plan {
    std::map<std::string, Policy, std::less<>> policies;
};

/// What the registry knows of one tenant: its plan, and its own limits for some policies.
struct TenantSettings {
    std::optional<std::string> plan;                      ///< a defined plan
    std::map<std::string, Policy, std::less<>> overrides;  ///< Policy::plan = tenant_override_label
};

struct AuthSettings {
    int deny_status = 429;  ///< status /v1/auth answers on deny (403 for nginx auth_request)
};

struct RlqsRules;   // rlqs_rules.hpp: the quota service's bucket rules
struct RlsDomains;  // rls_domain.hpp: the Envoy rate limit service's domains

/// How the Envoy rate limit service answers a call the store could not decide.
enum class RlsStoreError {
    on_store_error,  ///< each limit's own on_store_error: native registry configs
    unavailable,     ///< gRPC UNAVAILABLE: Envoy's failure_mode_deny decides (ERL mode, xDS)
    allow,           ///< OK (envoy_store_error: allow)
    deny             ///< OVER_LIMIT (envoy_store_error: deny)
};

/// Whose Redis keys and accounting Envoy's descriptors use: process settings
/// (envoy_key_layout, envoy_key_prefix, envoy_expiration_jitter), the same for every registry;
/// and how a store failure answers (envoy_store_error, in ERL mode and under xDS).
struct EnvoyKeys {
    /// envoy_key_layout: envoyproxy-ratelimit: a rule aligned to its unit is counted on
    /// envoyproxy/ratelimit's keys, as its pods count (Algorithm::erl_fixed_window).
    bool erl = false;
    std::string prefix;                     ///< its CACHE_KEY_PREFIX, before every key
    std::chrono::seconds jitter{0};         ///< its EXPIRATION_JITTER_MAX_SECONDS
    /// envoy_shadow_mode (its SHADOW_MODE): a call over a limit still answers OK overall.
    bool shadow_all = false;
    /// What a ShouldRateLimit call answers when the store fails or times out.
    RlsStoreError store_error = RlsStoreError::on_store_error;
    /// envoy_quota_mode (its QUOTA_MODE): every limited descriptor is in quota mode.
    bool quota_all = false;
};

/// The reloadable part of the config file. Immutable once built; shared between requests
/// through RegistryHandle.
struct Registry {
    std::string source_file;                    ///< the file it was loaded from
    std::string prefix = "rl";                  ///< Redis key prefix
    std::optional<std::string> default_policy;  ///< used when neither request nor route names one
    std::map<std::string, Policy, std::less<>> policies;
    std::map<std::string, Plan, std::less<>> plans;             ///< `plans:`
    std::map<std::string, TenantSettings, std::less<>> tenants; ///< `tenants:`
    std::vector<Route> routes;
    std::vector<IdentitySource> identity;
    /// The grouping of the source named "client_ip" (defaults when `identity` has none): used by
    /// route limits naming client_ip and by requests no identity source names.
    ClientIpPrefixes client_ip;
    std::vector<Cidr> trusted_proxies;
    AuthSettings auth;
    std::optional<std::string> hash_secret;     ///< key for hashing secret identities
    /// `domains:` and `envoy_config:` (docs/envoy-config.md); null when neither is set.
    std::shared_ptr<const RlsDomains> domains;
    /// xds_server is set and the control plane has not given a config yet: Envoy's calls are
    /// answered as envoyproxy/ratelimit answers them without one (errc::config_pending).
    bool awaiting_xds = false;
    std::string source_sha256;                  ///< SHA-256 of the file text, for /v1/policies
    std::int64_t loaded_at_epoch_s = 0;         ///< when it was loaded
    /// `notify:` (quota webhooks); null when the file has none.
    std::shared_ptr<const NotifySettings> notify;
    /// `rlqs:` (the rate limit quota service's buckets, docs/rlqs.md); null when the file has none.
    std::shared_ptr<const RlqsRules> rlqs;

    /// The policy with that name, or nullptr.
    [[nodiscard]] const Policy* find(std::string_view name) const {
        auto it = policies.find(name);
        return it == policies.end() ? nullptr : &it->second;
    }
    /// xds_server: the file's envoy_denied_calls, for the domains the control plane sends
    /// (RlsDomains::charge_denied of each accepted config).
    bool xds_charge_denied = false;
};

/// Process settings that may also come from the config file (flags and environment win);
/// the settings table (config/setting_table.hpp) reads them.
using FileSettings = config::FileSettings;

/// Everything one config file holds.
struct Config {
    Registry registry;
    FileSettings settings;
};

}  // namespace ratelimitd::policy
