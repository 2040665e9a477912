// Config loads into the audit trail: outcome, digest and the limits that changed.
#include "ratelimitd/app/config_audit.hpp"

#include "ratelimitd/audit/config_changes.hpp"

namespace ratelimitd::app {

namespace {

using json = nlohmann::ordered_json;

std::string_view event_of(std::string_view source) {
    return source == config_source::start ? "config_load" : "config_reload";
}

}  // namespace

void audit_config_applied(audit::AuditTrail& trail, std::string_view source, const audit::Actor& actor,
                          std::string_view name, const policy::Registry* before, const policy::Registry& after,
                          std::string digest) {
    const auto now = audit::enforced_limits(after);
    if (digest.empty()) {
        digest = after.source_sha256.empty() ? audit::limits_digest(now) : "sha256:" + after.source_sha256;
    }
    json fields = {{"source", source},      {"outcome", "applied"},          {"file", name},
                   {"digest", digest},      {"policies", after.policies.size()}};
    fields["changes"] = audit::limit_changes(before ? audit::enforced_limits(*before) : audit::LimitSet{}, now);
    trail.record(event_of(source), actor, std::move(fields));
}

void audit_config_refused(audit::AuditTrail& trail, std::string_view source, const audit::Actor& actor,
                          std::string_view name, std::string_view reason, std::string digest) {
    json fields = {{"source", source}, {"outcome", "refused"}, {"file", name}, {"reason", reason}};
    fields["digest"] = digest.empty() ? json(nullptr) : json(digest);
    trail.record(event_of(source), actor, std::move(fields));
}

void audit_xds_applied(audit::AuditTrail& trail, const audit::Actor& actor, std::string_view version,
                       const policy::Registry& before, const policy::Registry& after) {
    const auto now = audit::envoy_limits(after);
    json fields = {{"source", config_source::xds}, {"outcome", "applied"}, {"version", version},
                   {"digest", audit::limits_digest(now)}};
    fields["changes"] = audit::limit_changes(audit::envoy_limits(before), now);
    trail.record("config_reload", actor, std::move(fields));
}

}  // namespace ratelimitd::app
