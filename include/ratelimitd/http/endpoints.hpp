// The endpoint table: every path the router answers, its methods, handler, door (what a call
// can do, who may, its Redis work) and the route label its requests are counted under. 404,
// 405, Allow and the access rule the router enforces derive from it.
#pragma once

#include "ratelimitd/http/answer.hpp"
#include "ratelimitd/http/types.hpp"
#include "ratelimitd/road/door.hpp"

#include <boost/asio/awaitable.hpp>

#include <span>
#include <string>
#include <string_view>

namespace ratelimitd::http {

// The doors' access rows live beside the road (road/door.hpp); the endpoint table names them.
using road::Access;
using road::chose_access;
using road::Door;
using road::GrpcDoor;
namespace can = road::can;

/// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit.
GrpcDoor grpc_door() noexcept;

class EndpointServices;

/// One request as a handler sees it.
struct EndpointCall {
    const Request& req;
    std::string_view path;  ///< the target without its query
    const RequestContext& ctx;
    std::string_view request_id;  ///< the caller's X-Request-Id, or a new one
};

/// The methods an endpoint answers, as a set of bits.
namespace methods {
inline constexpr unsigned get = 1u << 0;
inline constexpr unsigned post = 1u << 1;
inline constexpr unsigned any = ~0u;  ///< every method (the auth subrequest keeps the original one)
}  // namespace methods

struct Endpoint {
    /// A free function (handlers.hpp), given the thread's services.
    using Handler = boost::asio::awaitable<Answer> (*)(EndpointServices&, const EndpointCall&);

    std::string_view path;  ///< also the route label of its requests in metrics
    bool subpaths;          ///< path + "/<anything>" is this endpoint too
    unsigned methods;       ///< bits of `methods::`
    Handler handler;
    Door door;              ///< what a call can do and who may (the router enforces `door.who`)
};

/// Every endpoint, in no particular order (paths do not overlap).
std::span<const Endpoint> endpoint_table() noexcept;

/// The endpoint `path` names, or nullptr (404).
const Endpoint* find_endpoint(std::string_view path) noexcept;

/// Whether `e` answers `method` (else 405).
bool allows(const Endpoint& e, bhttp::verb method) noexcept;

/// The Allow header of a 405 from `e`: its methods, comma-separated ("GET, POST").
std::string allow_header(const Endpoint& e);

/// The route label for metrics: the endpoint's path, or "other" (bounded cardinality).
std::string_view route_label(std::string_view path) noexcept;

}  // namespace ratelimitd::http
