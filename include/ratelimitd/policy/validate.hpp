// Character-set and length rules for the parts of a check that end up in a Redis key.
#pragma once

#include "ratelimitd/core/error.hpp"

#include <cstdint>
#include <string_view>

namespace ratelimitd::policy {

inline constexpr std::size_t max_tenant_bytes = 128;
inline constexpr std::size_t max_scope_bytes = 256;

/// tenant: 1..128 bytes of [A-Za-z0-9._:@-]; a tenant starting with "ip:" may end in one
/// "/<1..3 digits>" (a client network, "ip:10.1.0.0/16"). Fails with invalid_request naming
/// the field, e.g. "tenant: 129 bytes, at most 128 allowed" or "tenant: byte 4 ('/') is not
/// allowed ...".
result<void> validate_tenant(std::string_view tenant);

/// scope: 1..256 bytes of printable ASCII (0x21..0x7e) other than ':'.
result<void> validate_scope(std::string_view scope);

/// cost: 1..1000000 (the policy's own ceiling is checked once the policy is known).
result<void> validate_cost(std::int64_t cost);

/// Policy names: 1..64 bytes of [A-Za-z0-9._-] (so they need no escaping in a key or an
/// IETF header string).
bool is_valid_policy_name(std::string_view name) noexcept;

}  // namespace ratelimitd::policy
