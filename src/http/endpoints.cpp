// The endpoint table and what derives from it: lookup, methods, Allow, route labels.
#include "ratelimitd/http/endpoints.hpp"

#include "ratelimitd/http/handlers.hpp"

#include <array>
#include <utility>

namespace ratelimitd::http {

namespace {

using road::chose_way;
using road::Way;

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
        if (!chose_access(e.door.who) || !chose_way(e.door.road) || e.door.redis_work.empty()) return false;
        // Whatever spends units takes the road (road::Road): none plans or decides alone.
        if ((e.door.can & can::spend) != 0 && e.door.road == Way::own) return false;
        // A door that reads or changes another tenant's state is an operator's door.
        const unsigned operator_only = can::read_state | can::change_shared | can::read_settings;
        if ((e.door.can & operator_only) != 0 && e.door.who != Access::admin) return false;
        // Units come back only through an operator, or to the holder of a lease.
        if ((e.door.can & can::give_back) != 0 && e.door.who == Access::anyone) return false;
    }
    return true;
}

}  // namespace

std::span<const Endpoint> endpoint_table() noexcept {
    static constexpr std::array<Endpoint, 20> table{{
        {"/v1/check", false, methods::get | methods::post, &handlers::check,
         {can::spend, Access::anyone, one_decision, Way::check}},
        {"/v1/report", false, methods::post, &handlers::report,
         {can::spend | can::give_back, Access::admin_to_give_back,
          "one script call over the route's limits (at most 8) and their windows; a refund adds one "
          "PUBLISH per key",
          Way::report}},
        // /v1/auth/<original path>: Envoy's ext_authz appends the request's path; any method,
        // because Envoy asks with the original one.
        {"/v1/auth", true, methods::any, &handlers::auth, {can::spend, Access::anyone, one_decision, Way::auth}},
        {"/healthz", false, methods::get, &handlers::healthz, {0, Access::anyone, no_redis, Way::own}},
        {"/readyz", false, methods::get, &handlers::readyz, {0, Access::anyone, "one PING", Way::own}},
        {"/metrics", false, methods::get, &handlers::metrics_text, {0, Access::anyone, no_redis, Way::own}},
        {"/v1/policies", false, methods::get, &handlers::policies,
         {can::read_settings, Access::admin, no_redis, Way::own}},
        {"/v1/peek", false, methods::get, &handlers::peek,
         {can::read_state, Access::admin, "one read-only script call per window of one policy", Way::own}},
        {"/v1/top", false, methods::get, &handlers::top, {can::read_state, Access::admin, no_redis, Way::own}},
        {"/v1/reset", false, methods::post, &handlers::reset,
         {can::give_back | can::change_shared, Access::admin,
          "one DEL and one PUBLISH per window of one policy (two keys for a calendar window)", Way::own}},
        // A lease is a capability: only its holder, who got it from a check, knows it; a
        // release frees that one slot, never more.
        {"/v1/release", false, methods::post, &handlers::release,
         {can::give_back, Access::lease_holder, "one script call on one key", Way::release}},
        // The status page holds no data: its data comes through the admin doors.
        {"/", false, methods::get, &handlers::status_page, {0, Access::admin_page, no_redis, Way::own}},
        // Its charts: counts of the last 15 minutes kept in process (no tenant, no store).
        {"/v1/status/history", false, methods::get, &handlers::status_history,
         {can::read_state, Access::admin, no_redis, Way::own}},
        {"/v1/envoy/peek", false, methods::get, &handlers::envoy_peek,
         {can::read_state, Access::admin, "one read-only script call on one key", Way::own}},
        {"/v1/envoy/reset", false, methods::post, &handlers::envoy_reset,
         {can::give_back | can::change_shared, Access::admin, "one DEL and one PUBLISH on one key", Way::own}},
        // envoyproxy/ratelimit's own doors (ERL mode, docs/envoy.md "Replacing envoyproxy/ratelimit").
        {"/healthcheck", false, methods::get, &handlers::healthcheck,
         {0, Access::anyone, "none; one PING with REDIS_HEALTH_CHECK_ACTIVE_CONNECTION=true", Way::own}},
        // ShouldRateLimit in JSON: the gRPC call's bounds (descriptors, keys), refusals and road.
        {"/json", false, methods::post, &handlers::rls_json,
         {can::spend, Access::anyone, "as ShouldRateLimit: one script call over the call's descriptors (at most 64)",
          Way::rls}},
        {"/rlconfig", false, methods::get, &handlers::rlconfig, {can::read_settings, Access::admin, no_redis, Way::own}},
        // The audit trail's kept entries (docs/operations.md, "Audit trail"): peers, tenants, digests.
        {"/v1/audit", false, methods::get, &handlers::audit, {can::read_settings, Access::admin, no_redis, Way::own}},
        // Quota webhooks: one sample event to a configured target (an outbound POST, no store).
        {"/v1/notify/test", false, methods::post, &handlers::notify_test, {0, Access::admin, no_redis, Way::own}},
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
             Way::rls},
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
