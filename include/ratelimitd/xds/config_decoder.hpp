// A DiscoveryResponse's RateLimitConfig resources into the Envoy domains the registry serves,
// checked as whole: one bad resource refuses the response (NACK) and nothing changes.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <envoy/service/discovery/v3/discovery.pb.h>

#include <cstddef>
#include <memory>

namespace ratelimitd::xds {

namespace xds_bounds {
/// RateLimitConfig resources in one response (one per domain): envoy_config's file bound.
inline constexpr std::size_t max_resources = 1000;
/// Descriptors across every resource of one response.
inline constexpr std::size_t max_descriptors = 100'000;
}  // namespace xds_bounds

/// Every resource unpacked as a RateLimitConfig (its Any's type URL must be that type) and
/// read by the YAML reader, each domain once. An empty list is a valid state of the world: no
/// domain (every call answers OK, as for an unknown domain). Fails with invalid_request and one
/// sentence naming the resource (by index and name) and the field path, as a file's message
/// names its file. Never throws.
result<std::shared_ptr<const policy::RlsDomains>> decode_domains(
    const envoy::service::discovery::v3::DiscoveryResponse& response);

}  // namespace ratelimitd::xds
