// Envoy's RateLimitRequest (protobuf) -> policy::RlsRequest, within size limits.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/policy/rls_request.hpp"

#include "envoy/service/ratelimit/v3/rls.pb.h"

#include <cstddef>

namespace ratelimitd::rls {

/// The most a ShouldRateLimit call may carry: the planner's bounds (policy::rls_bounds, the
/// domain as the config allows it), all of them set by the proxy's own config, refused before
/// its strings are copied. What the proxy's clients shape (values, entry counts) is not
/// bounded here: a value over policy::max_kept_value_bytes is bounded (rls_value.hpp).
struct RequestLimits {
    std::size_t max_domain_bytes = 1024;
    std::size_t max_descriptors = policy::rls_bounds::max_descriptors;
    std::size_t max_key_bytes = policy::rls_bounds::max_key_bytes;      ///< an entry's key
};

/// The call as the planner reads it, each value bounded (policy::bounded_value). Fails
/// (invalid_request, naming the field and its index, never echoing a value) on an empty
/// domain or key, no descriptors or entries, or anything over `limits`. Never throws.
result<policy::RlsRequest> decode_request(const envoy::service::ratelimit::v3::RateLimitRequest& msg,
                                          const RequestLimits& limits = {});

}  // namespace ratelimitd::rls
