// A limit an Envoy descriptor sends for itself (RateLimitDescriptor.limit): checked, and made
// into the Policy that decides that descriptor, as envoyproxy/ratelimit decides it.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/policy/rls_request.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace ratelimitd::policy {

/// invalid_request naming `descriptors[i].limit.unit` when the unit is not one of RlsUnit's
/// (1..7): Envoy sends only those. Every requests_per_unit (0..UINT32_MAX) is valid.
[[nodiscard]] result<void> validate_override(const RlsLimitOverride& limit, std::size_t i);

/// The limit's Policy: a fixed window of requests_per_unit per unit, aligned to the unit,
/// named `label` (never shadow, on_store_error: allow). `limit` was validated.
[[nodiscard]] Policy override_policy(const RlsLimitOverride& limit, std::string label);

/// The bounded metric label of every overridden descriptor of `domain`: "<domain> (limit
/// override)"; no configured rule's label has a space right after the domain's.
[[nodiscard]] std::string override_label(std::string_view domain);

/// The rule part of an overridden descriptor's counter key: the domain's, then "%o", which no
/// escaped rule name holds ('%' only starts a hex pair there).
[[nodiscard]] std::string override_key_name(std::string_view domain);

}  // namespace ratelimitd::policy
