// Which rate-limit fields a ShouldRateLimit answer carries for Envoy to add.
#pragma once

#include <string>
#include <utility>

namespace ratelimitd::rls {

/// Which set of rate-limit fields an answer asks Envoy to add to the client's response.
enum class HeaderSet {
    ietf,        ///< RateLimit-Policy and RateLimit
    ietf_and_x,  ///< also X-RateLimit-Limit/-Remaining/-Reset and, when denied, Retry-After
    none,        ///< nothing (envoyproxy/ratelimit's default)
    erl,         ///< envoyproxy/ratelimit's three (LIMIT_RESPONSE_HEADERS_ENABLED), named by ErlHeaderNames
};

/// The names envoyproxy/ratelimit gives its three fields (LIMIT_LIMIT_HEADER,
/// LIMIT_REMAINING_HEADER, LIMIT_RESET_HEADER), its defaults unless set.
struct ErlHeaderNames {
    std::string limit = "RateLimit-Limit";
    std::string remaining = "RateLimit-Remaining";
    std::string reset = "RateLimit-Reset";
};

/// The fields an answer carries: a set, and for HeaderSet::erl the names. Built from a bare
/// HeaderSet where the names do not matter.
struct ResponseHeaders {
    HeaderSet set = HeaderSet::ietf;
    ErlHeaderNames names;

    ResponseHeaders() = default;
    ResponseHeaders(HeaderSet s) : set(s) {}  // NOLINT(google-explicit-constructor): a set alone says it all
    ResponseHeaders(HeaderSet s, ErlHeaderNames n) : set(s), names(std::move(n)) {}
};

}  // namespace ratelimitd::rls
