// Config loads into the audit trail: outcome, digest and the limits that changed.
#include "ratelimitd/app/config_audit.hpp"

#include "ratelimitd/audit/audit_event.hpp"
#include "ratelimitd/audit/config_changes.hpp"

namespace ratelimitd::app {

namespace {

audit::EventKind kind_of(std::string_view source) {
    return source == config_source::start ? audit::EventKind::config_load : audit::EventKind::config_reload;
}

}  // namespace

void audit_config_applied(audit::AuditTrail& trail, std::string_view source, const audit::Actor& actor,
                          std::string_view name, const policy::Registry* before, const policy::Registry& after,
                          std::string digest) {
    const auto now = audit::enforced_limits(after);
    if (digest.empty()) {
        digest = after.source_sha256.empty() ? audit::limits_digest(now) : "sha256:" + after.source_sha256;
    }
    audit::ConfigEvent e;
    e.kind = kind_of(source);
    e.source = source;
    e.applied = true;
    e.name = name;
    e.digest = std::move(digest);
    e.policies = after.policies.size();
    e.changes = audit::limit_changes(before ? audit::enforced_limits(*before) : audit::LimitSet{}, now);
    audit::write_event(trail, actor, e);
}

void audit_config_refused(audit::AuditTrail& trail, std::string_view source, const audit::Actor& actor,
                          std::string_view name, std::string_view reason, std::string digest) {
    audit::ConfigEvent e;
    e.kind = kind_of(source);
    e.source = source;
    e.applied = false;
    e.name = name;
    e.digest = std::move(digest);
    e.reason = reason;
    audit::write_event(trail, actor, e);
}

void audit_xds_applied(audit::AuditTrail& trail, const audit::Actor& actor, std::string_view version,
                       const policy::Registry& before, const policy::Registry& after) {
    const auto now = audit::envoy_limits(after);
    audit::ConfigEvent e;
    e.source = config_source::xds;
    e.applied = true;
    e.name = version;
    e.from_xds = true;
    e.digest = audit::limits_digest(now);
    e.changes = audit::limit_changes(audit::envoy_limits(before), now);
    audit::write_event(trail, actor, e);
}

void audit_xds_refused(audit::AuditTrail& trail, const audit::Actor& actor, std::string_view version,
                       std::string_view reason) {
    audit::ConfigEvent e;
    e.source = config_source::xds;
    e.applied = false;
    e.name = version;
    e.from_xds = true;
    e.reason = reason;
    audit::write_event(trail, actor, e);
}

}  // namespace ratelimitd::app
