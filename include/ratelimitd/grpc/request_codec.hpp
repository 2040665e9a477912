// Envoy's RateLimitRequest (protobuf) -> policy::RlsRequest, within size limits.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/rls_request.hpp"

#include "envoy/service/ratelimit/v3/rls.pb.h"

#include <cstddef>

namespace ratelimitd::rls {

/// The most a ShouldRateLimit call may carry. Envoy's own rate limit actions produce a few
/// descriptors of a few entries; anything far beyond is a broken or hostile client, refused
/// before it costs a key or a plan.
struct RequestLimits {
    std::size_t max_domain_bytes = 256;
    std::size_t max_descriptors = 64;
    std::size_t max_entries = 16;       ///< per descriptor
    std::size_t max_key_bytes = 256;    ///< an entry's key
    std::size_t max_value_bytes = 1024; ///< an entry's value
};

/// The call as the planner reads it. Fails (invalid_request, naming the field and its index,
/// never echoing a value) on an empty domain or key, or anything over `limits`. Never throws.
result<policy::RlsRequest> decode_request(const envoy::service::ratelimit::v3::RateLimitRequest& msg,
                                          const RequestLimits& limits = {});

}  // namespace ratelimitd::rls
