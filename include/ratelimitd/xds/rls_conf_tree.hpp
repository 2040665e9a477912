// One RateLimitConfig resource as the config tree an envoyproxy/ratelimit YAML file reads into,
// so the YAML reader (policy/envoy_domain_reader.hpp) checks and builds it: the same rules, the
// same refusals, the same in-memory domain.
#pragma once

#include "ratelimitd/policy/registry_reader.hpp"

#include <ratelimit/config/ratelimit/v3/rls_conf.pb.h>

#include <cstddef>

namespace ratelimitd::xds {

using ratelimit::config::ratelimit::v3::RateLimitConfig;

/// {domain, descriptors: [{key, value, rate_limit: {unit, requests_per_unit, unlimited, name,
/// replaces}, descriptors, shadow_mode, detailed_metric, quota_mode, metadata}]} with each field
/// written as a YAML file writes it: a proto3 default (empty value, false, no rate_limit, unit
/// UNKNOWN) is left out, as a file leaves it out; `metadata` as an empty map when set (only its
/// presence is checked). Descriptors nested deeper than envoy_bounds::max_depth are cut at that
/// depth + 1, where the reader refuses them; `descriptors_seen` counts every descriptor written.
policy::ConfigTree to_config_tree(const RateLimitConfig& config, std::size_t& descriptors_seen);

}  // namespace ratelimitd::xds
