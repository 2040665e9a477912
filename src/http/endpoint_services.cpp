// EndpointServices: the admin rule's audit lines, shared by the router and the report door.
#include "ratelimitd/http/endpoint_services.hpp"

#include "ratelimitd/http/admin_endpoints.hpp"

namespace ratelimitd::http {

audit::Actor EndpointServices::actor(const EndpointCall& call) const {
    // Called only once admin_access allowed the caller: with a token set, it presented it.
    return {call.ctx.peer.empty() ? std::nullopt : std::optional<std::string>(call.ctx.peer),
            options.admin_token.has_value()};
}

void EndpointServices::audit_admin_call(const EndpointCall& call, std::string_view door, unsigned status) const {
    if (options.audit == nullptr) return;
    audit::Actor who = actor(call);
    if (status != 0) who.token = false;
    options.audit->admin_call(who, door, call.req.method_string(), status);
}

std::optional<Response> EndpointServices::give_back_refusal(const EndpointCall& call) const {
    auto refusal = admin_refusal(call.req, options.admin_token, call.ctx.peer, AdminAct::give_back);
    audit_admin_call(call, call.path, refusal ? refusal->result_int() : 0);
    return refusal;
}

}  // namespace ratelimitd::http
