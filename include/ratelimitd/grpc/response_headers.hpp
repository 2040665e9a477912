// Which rate-limit fields a ShouldRateLimit answer carries for Envoy to add.
#pragma once

namespace ratelimitd::rls {

/// Which rate-limit fields an answer asks Envoy to add to the client's response.
enum class ResponseHeaders {
    ietf,        ///< RateLimit-Policy and RateLimit
    ietf_and_x,  ///< also X-RateLimit-Limit/-Remaining/-Reset and, when denied, Retry-After
};

}  // namespace ratelimitd::rls
