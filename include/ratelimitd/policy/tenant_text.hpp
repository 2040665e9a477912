// The text type of a tenant as it travels with a planned check and its decision.
#pragma once

#include "ratelimitd/core/inline_text.hpp"

namespace ratelimitd::policy {

/// A tenant held in place up to 48 bytes: a hashed identity ("key:" and 32 hex digits, 36
/// bytes; 44 for a base64 HMAC-SHA-256), an address tenant ("ip:" and an IPv6 network) and
/// the usual ids fit, so neither identifying a /v1/auth request nor the decision's copy of its
/// tenant allocates (std::string keeps 15 bytes in place: each was an allocation per request).
/// Longer tenants (up to max_tenant_bytes) still work, on the heap.
using TenantText = InlineText<48>;

}  // namespace ratelimitd::policy
