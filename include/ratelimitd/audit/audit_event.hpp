// The audit trail's events as types: one kind per act, one struct per kind, each written by
// write_event (audit_event.cpp), the one place its JSON fields are named. A caller fills the
// struct; it never spells an event name or a field.
#pragma once

#include "ratelimitd/audit/audit_trail.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ratelimitd::audit {

/// What an entry records. admin_call is the trail's own (AuditTrail::admin_call coalesces it).
enum class EventKind : unsigned char {
    config_load = 1,  ///< the config the process started with
    config_reload,    ///< a file change, a SIGHUP or an xDS update: applied or refused
    reset,            ///< POST /v1/reset, POST /v1/envoy/reset
    refund,           ///< POST /v1/report with a negative cost
};

/// The event name an entry carries ("config_load", ...).
std::string_view to_string(EventKind kind) noexcept;

/// A config load or reload, applied or refused.
struct ConfigEvent {
    EventKind kind = EventKind::config_reload;  ///< config_load (start) or config_reload
    std::string_view source;                    ///< start, sighup, file_change, xds
    bool applied = false;
    /// The file's name; for xDS, the update's version.
    std::string_view name;
    bool from_xds = false;                      ///< `name` is a version (its field is "version")
    std::string digest;                         ///< empty on a refusal: null
    std::string_view reason;                    ///< refused: why
    std::optional<std::size_t> policies;        ///< applied from a file: the policies in force
    nlohmann::ordered_json changes;             ///< applied: the limits that changed
};

/// The key a /v1/reset names.
struct PolicyTarget {
    std::string_view policy;  ///< as asked ("" when the body named none)
    std::string_view tenant;
    std::string_view scope;
};

/// The counter a /v1/envoy/reset names (never its descriptor values).
struct EnvoyTarget {
    std::string_view domain;
    std::string rule;  ///< the rule's label, when the descriptor reached one
    std::vector<std::string> entry_keys;
    std::string key_hash;  ///< first 16 hex digits of the counter key's SHA-256
};

/// An operator's reset, and what came of it.
struct ResetEvent {
    std::string_view door;  ///< the endpoint's path
    std::variant<PolicyTarget, EnvoyTarget> target;
    std::string_view outcome;  ///< reset, nothing_to_reset, not_limited, or an error code
    unsigned status = 0;       ///< the HTTP status answered
    std::string_view request_id;
};

/// A refund (a report with a negative cost), and what came of it.
struct RefundEvent {
    std::string_view policy;
    std::string_view tenant;
    std::string_view scope;
    std::int64_t units = 0;
    std::string_view outcome;  ///< refunded, not_limited, or why not (an error code)
    std::string_view request_id;
};

/// The one place each kind is written into `trail`, by `actor`.
void write_event(AuditTrail& trail, const Actor& actor, const ConfigEvent& e);
void write_event(AuditTrail& trail, const Actor& actor, const ResetEvent& e);
void write_event(AuditTrail& trail, const Actor& actor, const RefundEvent& e);

}  // namespace ratelimitd::audit
