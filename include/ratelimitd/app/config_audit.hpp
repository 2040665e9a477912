// The audit entries of config loads: the start's, each reload's (file change, SIGHUP) and each
// xDS update's, applied with what changed or refused with why (docs/operations.md, "Audit trail").
#pragma once

#include "ratelimitd/audit/audit_trail.hpp"
#include "ratelimitd/policy/policy.hpp"

#include <string>
#include <string_view>

namespace ratelimitd::app {

/// Where a config came from, as its entry's "source" names it.
namespace config_source {
inline constexpr std::string_view start = "start";
inline constexpr std::string_view sighup = "sighup";
inline constexpr std::string_view file_change = "file_change";
inline constexpr std::string_view xds = "xds";
}  // namespace config_source

/// One "config_load" (source start) or "config_reload" entry: `after` is in force; `before` is
/// what served until then (null at start: every limit is added). `digest`: "sha256:<hex>" of
/// the file's bytes, or empty for the canonical digest of the limits.
void audit_config_applied(audit::AuditTrail& trail, std::string_view source, const audit::Actor& actor,
                          std::string_view name, const policy::Registry* before, const policy::Registry& after,
                          std::string digest = {});

/// One "config_reload" entry of a refused config: `reason` as the error line says it.
void audit_config_refused(audit::AuditTrail& trail, std::string_view source, const audit::Actor& actor,
                          std::string_view name, std::string_view reason, std::string digest = {});

/// An xDS update: only the Envoy rules change, so only they are compared and digested.
void audit_xds_applied(audit::AuditTrail& trail, const audit::Actor& actor, std::string_view version,
                       const policy::Registry& before, const policy::Registry& after);

/// A refused xDS update: `reason` as the error line says it.
void audit_xds_refused(audit::AuditTrail& trail, const audit::Actor& actor, std::string_view version,
                       std::string_view reason);

}  // namespace ratelimitd::app
