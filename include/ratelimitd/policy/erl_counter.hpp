// envoyproxy/ratelimit's counter of one descriptor (envoy_key_layout: envoyproxy-ratelimit):
// its Redis key, written as its cache_key.go writes it, and the policy that counts on it as
// its pods count (Algorithm::erl_fixed_window).
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/policy/rls_request.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ratelimitd::policy {

/// The start of the window of `unit` holding `now_s`, as envoyproxy/ratelimit divides time:
/// (now / unit seconds) * unit seconds, a month being 30 days and a year 365 from the epoch.
[[nodiscard]] std::int64_t erl_window_start(RlsUnit unit, std::int64_t now_s) noexcept;

/// The most bytes a key writes its entries in ("key_value_" each): one entry of the longest
/// key and the longest value kept as sent (rls_value.hpp) fits, as ERL's pods write it.
inline constexpr std::size_t max_erl_entries_bytes = 6144;

/// prefix + domain + "_" + (entry key + "_" + entry value + "_") per entry + window start:
/// "rl_edge_remote_address_10.0.0.1_1764518400". Keys and values go in as sent (its pods
/// write them so: "a_b" + "c" and "a" + "b_c" share a key there, and so here). Entries of
/// more than max_erl_entries_bytes are written as "%h" + their SHA-256 (hex) + "_" instead:
/// ERL's pods would write a longer key (not shared then), and a call's keys stay short.
[[nodiscard]] std::string erl_key(std::string_view prefix, std::string_view domain, std::span<const RlsEntry> entries,
                                  RlsUnit unit, std::int64_t now_s);

/// `base` (a rule's policy, or a descriptor's own limit) counted as envoyproxy/ratelimit
/// counts: requests_per_unit per unit, charged with INCRBY + EXPIRE (unit + up to `jitter`).
[[nodiscard]] Policy erl_policy(const Policy& base, std::uint32_t requests_per_unit, RlsUnit unit,
                                std::chrono::seconds jitter);

}  // namespace ratelimitd::policy
