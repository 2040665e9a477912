// Error codes and the Problem value that request-path functions return instead of throwing.
#pragma once

#include <boost/system/result.hpp>

#include <string>
#include <string_view>
#include <utility>

namespace ratelimitd {

/// Why a request could not be decided. Client mistakes map to a 4xx status in one table
/// (http/check_codec.cpp); store failures never reach the client as errors: the policy's
/// on_store_error turns them into allow or deny.
enum class errc {
    /// The body is not JSON, a field has the wrong type, or tenant/scope break their rules.
    /// Retrying the same request never helps.
    invalid_request = 1,
    /// The policy named in the request (or by a route) is not in the registry.
    unknown_policy,
    /// cost is outside 1..1000000, or larger than the policy can ever admit.
    invalid_cost,
    /// The body is larger than max_body_bytes (16 KiB unless configured).
    payload_too_large,
    /// No endpoint at that path.
    not_found,
    /// The path exists but not for that method.
    method_not_allowed,
    /// The store could not be reached (not connected, connection dropped, breaker open).
    /// Retrying later may help.
    store_unavailable,
    /// The store did not answer within store_timeout. Retrying later may help.
    store_timeout,
    /// The store answered with something that is not a verdict (a bug or a foreign script).
    bad_script_reply,
    /// The server holds max_connections connections already (503). Retrying later may help.
    too_many_connections,
    /// The plan named in the request is not in the registry.
    unknown_plan,
    /// The request's header block (request line included) is over max_header_bytes (431).
    header_too_large,
    /// The Envoy domains come from an xDS control plane (xds_server) that has not given a
    /// config yet. Retrying later may help.
    config_pending,
};

/// The stable lower-case name of a code, as it appears in JSON error bodies and logs.
std::string_view to_string(errc code) noexcept;

/// A code plus one human sentence that names the field or the cause,
/// e.g. {invalid_request, "tenant: 129 bytes, at most 128 allowed"}.
struct Problem {
    errc code;
    std::string detail;
};

/// An invalid_request Problem: what config and request parsers refuse with.
inline Problem invalid_request(std::string detail) { return Problem{errc::invalid_request, std::move(detail)}; }

/// Lets boost::system::result<T, Problem>::value() throw; request code never calls value()
/// without checking has_value() first.
[[noreturn]] void throw_exception_from_error(const Problem& p, const boost::source_location& loc);

template <class T>
using result = boost::system::result<T, Problem>;

}  // namespace ratelimitd
