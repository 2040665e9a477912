// A door: what one call through an endpoint (or the gRPC service) can do, who may call it,
// the most Redis work the call can cause, and its way onto the road (road::Road). Every row of
// the endpoint table has one, and docs/security.md shows the same table. Beside the road: the
// rows say who may take it, the road says what a call on it does.
#pragma once

#include "ratelimitd/road/way.hpp"
#include "ratelimitd/policy/rls_refusals.hpp"

#include <span>
#include <string_view>

namespace ratelimitd::road {

/// What a call through a door can do, as a set of bits (0: none of these).
namespace can {
inline constexpr unsigned spend = 1u << 0;          ///< charge units to a key
inline constexpr unsigned give_back = 1u << 1;      ///< return units to a key (a refund, a reset)
inline constexpr unsigned read_state = 1u << 2;     ///< read a key's state, any tenant's
inline constexpr unsigned change_shared = 1u << 3;  ///< forget a key's state for every caller counting on it
inline constexpr unsigned read_settings = 1u << 4;  ///< read the policies in force
}  // namespace can

/// Who may call a door. No enumerator is 0, so a row that forgot to choose is caught at
/// compile time (see endpoints.cpp) rather than defaulting to "anyone".
enum class Access : unsigned char {
    /// Whoever reaches the port: the callers that may check.
    anyone = 1,
    /// admin_access (admin_endpoints.hpp): the bearer token when one is set, else loopback
    /// peers only. The router asks before it reads anything else of the request.
    admin,
    /// Anyone to spend; admin_access to give units back (a negative cost). The handler asks
    /// once it has read the cost, through the router's one admin rule.
    admin_to_give_back,
    /// Whoever holds the lease a check returned (32 random hex digits, a capability): frees
    /// that one concurrency slot, never more. Otherwise as `anyone`.
    lease_holder,
    /// Loopback peers only when no token is set, anyone when one is: the status page, which
    /// holds no data (its data comes through admin doors).
    admin_page,
};

/// One door's row.
struct Door {
    unsigned can;                  ///< bits of `can::`
    Access who;                    ///< never value-initialised: every row chooses
    std::string_view redis_work;   ///< the bound on the Redis work of one call, for the docs
    Way road;                      ///< its way onto road::Road; every row chooses
};

/// True when `who` is one of Access's enumerators (a row that chose).
constexpr bool chose_access(Access who) noexcept {
    switch (who) {
    case Access::anyone:
    case Access::admin:
    case Access::admin_to_give_back:
    case Access::lease_holder:
    case Access::admin_page: return true;
    }
    return false;
}

/// The gRPC door (Envoy's rate limit service), which is not an HTTP endpoint; its limits on
/// requests live in src/grpc/.
struct GrpcDoor {
    std::string_view name;
    Door door;
    /// The only calls it answers with an error, each the proxy's doing: an error lets Envoy
    /// admit the request, so nothing a client shapes is among them.
    std::span<const policy::RlsRefusal> refusals;
};

}  // namespace ratelimitd::road
