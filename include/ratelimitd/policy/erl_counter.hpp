// envoyproxy/ratelimit's counter of one descriptor (envoy_key_layout: envoyproxy-ratelimit):
// its Redis key, written as its cache_key.go writes it, and the policy that counts on it as
// its pods count (Algorithm::erl_fixed_window).
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/policy/rls_request.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ratelimitd::policy {

/// The start of the window of `unit` holding `now_s`, as envoyproxy/ratelimit divides time:
/// (now / unit seconds) * unit seconds, a month being 30 days and a year 365 from the epoch.
[[nodiscard]] std::int64_t erl_window_start(RlsUnit unit, std::int64_t now_s) noexcept;

/// prefix + domain + "_" + (entry key + "_" + entry value + "_") per entry + window start:
/// "rl_edge_remote_address_10.0.0.1_1764518400". Keys and values go in as sent (its pods
/// write them so: "a_b" + "c" and "a" + "b_c" share a key there, and so here).
[[nodiscard]] std::string erl_key(std::string_view prefix, std::string_view domain, std::span<const RlsEntry> entries,
                                  RlsUnit unit, std::int64_t now_s);

/// `base` (a rule's policy, or a descriptor's own limit) counted as envoyproxy/ratelimit
/// counts: requests_per_unit per unit, charged with INCRBY + EXPIRE (unit + up to `jitter`).
[[nodiscard]] Policy erl_policy(const Policy& base, std::uint32_t requests_per_unit, RlsUnit unit,
                                std::chrono::seconds jitter);

}  // namespace ratelimitd::policy
