// Envoy's RateLimitRequest (protobuf) -> policy::RlsRequest, within size limits.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/policy/rls_request.hpp"

#include "envoy/service/ratelimit/v3/rls.pb.h"

#include <cstddef>

namespace ratelimitd::rls {

/// The most a ShouldRateLimit call may carry: the planner's bounds (policy::rls_bounds, the
/// domain as the config allows it). Envoy's rate limit actions produce a few descriptors of a
/// few entries; anything far beyond is a broken or hostile client, refused before its
/// strings are copied.
struct RequestLimits {
    std::size_t max_domain_bytes = 1024;
    std::size_t max_descriptors = policy::rls_bounds::max_descriptors;
    std::size_t max_entries = policy::rls_bounds::max_entries;          ///< per descriptor
    std::size_t max_key_bytes = policy::rls_bounds::max_key_bytes;      ///< an entry's key
    std::size_t max_value_bytes = policy::rls_bounds::max_value_bytes;  ///< an entry's value
};

/// The call as the planner reads it. Fails (invalid_request, naming the field and its index,
/// never echoing a value) on an empty domain or key, or anything over `limits`. Never throws.
result<policy::RlsRequest> decode_request(const envoy::service::ratelimit::v3::RateLimitRequest& msg,
                                          const RequestLimits& limits = {});

}  // namespace ratelimitd::rls
