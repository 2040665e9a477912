// /v1/auth on the wire: a reverse proxy's subrequest in, 200 or the deny status out.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/http/answer.hpp"
#include "ratelimitd/http/types.hpp"
#include "ratelimitd/policy/identity.hpp"
#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd::http {

/// The endpoint's own path; "/v1/auth/<rest>" also answers, with "/<rest>" as the original
/// URI (Envoy ext_authz's path_prefix).
inline constexpr std::string_view auth_path = "/v1/auth";

/// True for /v1/auth and /v1/auth/...
bool is_auth_path(std::string_view path) noexcept;

/// What a proxy asks about.
struct AuthQuery {
    std::string method;              ///< the original request's method
    std::string uri;                 ///< the original request's path and query
    std::optional<int> deny_status;  ///< ?deny_status=NNN on /v1/auth: overrides auth.deny_status
};

/// Reads the original method and URI: X-Original-Method / X-Original-URI (nginx), else
/// X-Forwarded-Method / X-Forwarded-Uri (Traefik), else, on /v1/auth/<rest>, the request's own
/// method and "/<rest>" (Envoy), else the request's own method and target. The query of
/// /v1/auth itself may set deny_status (400..599); on /v1/auth/<rest> the query belongs to the
/// client and is never read. An original URI or method header sent twice, or a malformed
/// deny_status, fails with invalid_request. Never throws.
result<AuthQuery> parse_auth_request(const Request& req, std::string_view path);

/// The request's headers and peer as identification sees them. Borrows from both.
policy::IdentityInput identity_input(const Request& req, std::string_view peer);

/// The answer to a proxy: 200 when allowed (with the limit headers when limited), else
/// `deny_status` with the limit headers and Retry-After. A degraded decision carries
/// X-RateLimit-Degraded: 200 when failing open, `deny_status` with Retry-After: 1 when failing
/// closed. Always Cache-Control: no-store (a cached allow would not be counted). An allow has
/// no body (Content-Length: 0, so a proxy can reuse the connection); a deny's body is a short
/// JSON object, empty for HEAD.
Answer make_auth_answer(const service::Decision& d, int deny_status, unsigned version, bool keep_alive, bool head);

/// make_auth_answer as a Beast message, for tests and tools that read its fields.
Response make_auth_response(const service::Decision& d, int deny_status, unsigned version,
                            bool keep_alive, bool head);

}  // namespace ratelimitd::http
