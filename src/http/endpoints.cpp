// The endpoint table and what derives from it: lookup, methods, Allow, route labels.
#include "ratelimitd/http/endpoints.hpp"

#include "ratelimitd/http/router.hpp"

#include <array>
#include <utility>

namespace ratelimitd::http {

namespace {

using door::chose_road;
using door::Road;

// The names of the method bits, in the order Allow lists them.
constexpr std::array<std::pair<unsigned, std::string_view>, 2> method_names{{
    {methods::get, "GET"},
    {methods::post, "POST"},
}};

unsigned method_bit(bhttp::verb method) noexcept {
    switch (method) {
    case bhttp::verb::get: return methods::get;
    case bhttp::verb::post: return methods::post;
    default: return 0;
    }
}

bool matches(const Endpoint& e, std::string_view path) noexcept {
    if (path == e.path) return true;
    return e.subpaths && path.size() > e.path.size() && path.starts_with(e.path) && path[e.path.size()] == '/';
}

// What one call of each kind costs Redis at most (the per-script bounds: docs/stores.md).
constexpr std::string_view no_redis = "none";
constexpr std::string_view one_decision =
    "one script call over the route's limits (at most 8) and their windows";

// Every row chooses its door: `who` and `road` have no zero enumerator, so a row that left one
// out (value-initialised) fails here, and -Wmissing-field-initializers catches the omission first.
template <std::size_t N>
constexpr bool every_row_chooses(const std::array<Endpoint, N>& table) {
    for (const Endpoint& e : table) {
        if (!chose_access(e.door.who) || !chose_road(e.door.road) || e.door.redis_work.empty()) return false;
        // Whatever spends units takes one of the doors' roads: none plans or decides alone.
        if ((e.door.can & can::spend) != 0 && e.door.road == Road::own) return false;
        // A door that reads or changes another tenant's state is an operator's door.
        const unsigned operator_only = can::read_state | can::change_shared | can::read_settings;
        if ((e.door.can & operator_only) != 0 && e.door.who != Access::admin) return false;
        // Units come back only through an operator, or to the holder of a lease.
        if ((e.door.can & can::give_back) != 0 && e.door.who == Access::anyone) return false;
    }
    return true;
}

}  // namespace

// A friend of Router: the handlers are its private members.
std::span<const Endpoint> endpoint_table() noexcept {
    static constexpr std::array<Endpoint, 19> table{{
        {"/v1/check", false, methods::get | methods::post, &Router::check,
         {can::spend, Access::anyone, one_decision, Road::check}},
        {"/v1/report", false, methods::post, &Router::report,
         {can::spend | can::give_back, Access::admin_to_give_back,
          "one script call over the route's limits (at most 8) and their windows; a refund adds one "
          "PUBLISH per key",
          Road::report}},
        // /v1/auth/<original path>: Envoy's ext_authz appends the request's path; any method,
        // because Envoy asks with the original one.
        {"/v1/auth", true, methods::any, &Router::auth, {can::spend, Access::anyone, one_decision, Road::auth}},
        {"/healthz", false, methods::get, &Router::healthz, {0, Access::anyone, no_redis, Road::own}},
        {"/readyz", false, methods::get, &Router::readyz, {0, Access::anyone, "one PING", Road::own}},
        {"/metrics", false, methods::get, &Router::metrics_text, {0, Access::anyone, no_redis, Road::own}},
        {"/v1/policies", false, methods::get, &Router::policies,
         {can::read_settings, Access::admin, no_redis, Road::own}},
        {"/v1/peek", false, methods::get, &Router::peek,
         {can::read_state, Access::admin, "one read-only script call per window of one policy", Road::own}},
        {"/v1/top", false, methods::get, &Router::top, {can::read_state, Access::admin, no_redis, Road::own}},
        {"/v1/reset", false, methods::post, &Router::reset,
         {can::give_back | can::change_shared, Access::admin,
          "one DEL and one PUBLISH per window of one policy (two keys for a calendar window)", Road::own}},
        // A lease is a capability: only its holder, who got it from a check, knows it; a
        // release frees that one slot, never more.
        {"/v1/release", false, methods::post, &Router::release,
         {can::give_back, Access::lease_holder, "one script call on one key", Road::release}},
        // The status page holds no data: its data comes through the admin doors.
        {"/", false, methods::get, &Router::status_page, {0, Access::admin_page, no_redis, Road::own}},
        {"/v1/envoy/peek", false, methods::get, &Router::envoy_peek,
         {can::read_state, Access::admin, "one read-only script call on one key", Road::own}},
        {"/v1/envoy/reset", false, methods::post, &Router::envoy_reset,
         {can::give_back | can::change_shared, Access::admin, "one DEL and one PUBLISH on one key", Road::own}},
        // envoyproxy/ratelimit's own doors (ERL mode, docs/envoy.md "Replacing envoyproxy/ratelimit").
        {"/healthcheck", false, methods::get, &Router::healthcheck,
         {0, Access::anyone, "none; one PING with REDIS_HEALTH_CHECK_ACTIVE_CONNECTION=true", Road::own}},
        // ShouldRateLimit in JSON: the gRPC call's bounds (descriptors, keys), refusals and road.
        {"/json", false, methods::post, &Router::rls_json,
         {can::spend, Access::anyone, "as ShouldRateLimit: one script call over the call's descriptors (at most 64)",
          Road::rls}},
        {"/rlconfig", false, methods::get, &Router::rlconfig, {can::read_settings, Access::admin, no_redis, Road::own}},
        // The audit trail's kept entries (docs/operations.md, "Audit trail"): peers, tenants, digests.
        {"/v1/audit", false, methods::get, &Router::audit, {can::read_settings, Access::admin, no_redis, Road::own}},
        // Quota webhooks: one sample event to a configured target (an outbound POST, no store).
        {"/v1/notify/test", false, methods::post, &Router::notify_test, {0, Access::admin, no_redis, Road::own}},
    }};
    static_assert(every_row_chooses(table), "every endpoint chooses its door and road (endpoints.hpp, door.hpp)");
    return table;
}

GrpcDoor grpc_door() noexcept {
    return {"envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit",
            {can::spend, Access::anyone,
             "one script call over the call's descriptors (at most 64), check-only ones (hits_addend 0) included; "
             "a denied call under envoy_denied_calls: charge one more script call (none with envoy_key_layout: "
             "envoyproxy-ratelimit)",
             Road::rls},
            policy::rls_refusals()};
}

const Endpoint* find_endpoint(std::string_view path) noexcept {
    for (const Endpoint& e : endpoint_table()) {
        if (matches(e, path)) return &e;
    }
    return nullptr;
}

bool allows(const Endpoint& e, bhttp::verb method) noexcept {
    return e.methods == methods::any || (e.methods & method_bit(method)) != 0;
}

std::string allow_header(const Endpoint& e) {
    std::string out;
    for (const auto& [bit, name] : method_names) {
        if ((e.methods & bit) == 0) continue;
        if (!out.empty()) out += ", ";
        out += name;
    }
    return out;
}

std::string_view route_label(std::string_view path) noexcept {
    const Endpoint* e = find_endpoint(path);
    return e != nullptr ? e->path : "other";
}

}  // namespace ratelimitd::http
