// The `notify:` section as values: webhook targets, and the thresholds of each policy that
// send an event to one of them (docs/operations.md, docs/operations.md "Quota webhooks").
#pragma once

#include "ratelimitd/core/hmac_sha256.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::policy {

/// Where events go: an http:// or https:// URL split for the client, and the key that signs them.
struct NotifyTarget {
    std::string name;     ///< its key under notify.targets
    std::string url;      ///< as written (no secret in it: the loader refuses userinfo)
    std::string host;
    std::string port;     ///< "80" ("443" for https://) when the URL names none
    /// https://: TLS with the receiver's certificate verified (chain and host name) against
    /// `ca_file`'s CAs, or the system's when it is empty.
    bool tls = false;
    std::string ca_file{};
    std::string target;   ///< path and query, "/" at least
    /// The HMAC-SHA256 key of RateLimit-Signature. Never logged, never rendered, never in an
    /// error message.
    std::string secret;
    /// `secret`'s HMAC pad states, computed once by the loader with it: a signature then costs
    /// two SHA-256 blocks plus the body's, not the key's work again. Empty (a target built by
    /// hand): the signature keys `secret` itself.
    std::optional<HmacSha256> signer;
    std::chrono::milliseconds timeout{2000};  ///< one delivery attempt, connect to answer
};

/// Thresholds above this many per policy are refused: the scripts report them as a bitmask.
inline constexpr std::size_t max_notify_thresholds = 8;

/// The thresholds of one policy (`notify.policies.NAME`), shared by every Policy object of that
/// name (its plans' and tenants' versions, its windows).
struct NotifyRule {
    std::string policy;                          ///< the policy's name, as the events spell it
    std::vector<double> at;                      ///< fractions of the limit, 0 < f <= 1, as written; may be empty
    std::shared_ptr<const NotifyTarget> target;  ///< never null
    /// `debt:` a report's debt, in units past the limit, at which an event of type "debt" is
    /// sent (once per window); 0: none.
    std::int64_t debt = 0;
};

/// What the scripts compare the units used with: ceil(f * limit), at least 1, for f < 1; 0
/// for f = 1, which means "the first denial in the window".
[[nodiscard]] std::int64_t threshold_units(double fraction, std::int64_t limit) noexcept;

/// The thresholds of `rule` for a window of `limit` units as the scripts read them:
/// "u1,u2,..." in the order of rule.at (so position k - 1 is at[k - 1]).
[[nodiscard]] std::string threshold_spec(const NotifyRule& rule, std::int64_t limit);

/// A report's debt bound: "debt:<units>"; "" when `rule` has none.
[[nodiscard]] std::string debt_spec(const NotifyRule& rule);

/// What lua/notify/crossings.lua's notify_report reads for a report on a window of `limit`
/// units: its thresholds, ';', its debt bound ("8,0;debt:40", "8;", ";debt:40"); "" when the
/// rule has neither, and then the report sends nothing.
[[nodiscard]] std::string report_spec(const NotifyRule& rule, std::int64_t limit);

/// The whole section: targets by name (POST /v1/notify/test names one).
struct NotifySettings {
    std::map<std::string, std::shared_ptr<const NotifyTarget>, std::less<>> targets;
    /// With xds_server: the thresholds of names that are no policy, kept as labels of the rules
    /// the control plane will send (they cannot be checked at load), hung on each version's
    /// rules as it is applied (with_xds_thresholds).
    std::map<std::string, std::shared_ptr<const NotifyRule>, std::less<>> xds_labels;
};

}  // namespace ratelimitd::policy
