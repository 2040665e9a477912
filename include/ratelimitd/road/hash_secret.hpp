// The key of hashed identities (/v1/auth's identity sources): a planning input of the auth door.
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd::road {

/// The key for hashed identities: `env_secret` (RATELIMITD_HASH_SECRET) when set, else the
/// registry's hash_secret, else a random key made once per process (so hashed tenants then
/// differ between instances and restarts).
std::string_view effective_hash_secret(const std::optional<std::string>& env_secret,
                                       const policy::Registry& reg);

}  // namespace ratelimitd::road
