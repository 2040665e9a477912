// The audit events' JSON fields, named in one place per kind.
#include "ratelimitd/audit/audit_event.hpp"

namespace ratelimitd::audit {

namespace {

using json = nlohmann::ordered_json;

struct TargetFields {
    json& out;
    void operator()(const PolicyTarget& t) const {
        out["policy"] = t.policy;
        out["tenant"] = t.tenant;
        out["scope"] = t.scope;
    }
    void operator()(const EnvoyTarget& t) const {
        out["domain"] = t.domain;
        out["rule"] = t.rule;
        out["descriptor_keys"] = t.entry_keys;
        out["key_hash"] = t.key_hash;
    }
};

}  // namespace

std::string_view to_string(EventKind kind) noexcept {
    switch (kind) {
    case EventKind::config_load: return "config_load";
    case EventKind::config_reload: return "config_reload";
    case EventKind::reset: return "reset";
    case EventKind::refund: return "refund";
    }
    return "unknown";
}

void write_event(AuditTrail& trail, const Actor& actor, const ConfigEvent& e) {
    json fields = {{"source", e.source}, {"outcome", e.applied ? "applied" : "refused"}};
    fields[e.from_xds ? "version" : "file"] = e.name;
    if (!e.applied) fields["reason"] = e.reason;
    fields["digest"] = e.digest.empty() ? json(nullptr) : json(e.digest);
    if (e.applied && e.policies) fields["policies"] = *e.policies;
    if (e.applied) fields["changes"] = e.changes;
    trail.record(to_string(e.kind), actor, std::move(fields));
}

void write_event(AuditTrail& trail, const Actor& actor, const ResetEvent& e) {
    json fields = {{"door", e.door}};
    std::visit(TargetFields{fields}, e.target);
    fields["outcome"] = e.outcome;
    fields["status"] = e.status;
    fields["request_id"] = e.request_id;
    trail.record(to_string(EventKind::reset), actor, std::move(fields));
}

void write_event(AuditTrail& trail, const Actor& actor, const RefundEvent& e) {
    trail.record(to_string(EventKind::refund), actor,
                 {{"door", "/v1/report"},
                  {"policy", e.policy},
                  {"tenant", e.tenant},
                  {"scope", e.scope},
                  {"units", e.units},
                  {"outcome", e.outcome},
                  {"request_id", e.request_id}});
}

}  // namespace ratelimitd::audit
