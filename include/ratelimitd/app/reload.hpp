// The one road into the registry: a file reload (SIGHUP, a change on disk) and an xDS update
// are each one ConfigChange, checked, swapped, counted, logged and audited alike.
#pragma once

#include "ratelimitd/app/config_warnings.hpp"
#include "ratelimitd/audit/audit_trail.hpp"
#include "ratelimitd/policy/registry_handle.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/service/metrics.hpp"
#include "ratelimitd/store/backend.hpp"

#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace ratelimitd::app {

/// What one reload came to, for the caller (the xDS client's NACK names `reason`).
struct ReloadOutcome {
    bool applied = false;
    std::string reason;  ///< refused: the error line's cause (never a secret: messages do not echo them)
    std::string digest;  ///< "sha256:<hex>" of the file read, when it was read; else empty
};

/// One change of the config in force.
struct ConfigChange {
    std::string_view source;  ///< config_source::sighup, file_change or xds (its audit entry's)
    audit::Actor actor;       ///< the process, or the control plane
    std::string name;         ///< the file, or the control plane's version
    /// The registry to serve next, made from the one in force at that moment (taken under the
    /// reloader's lock, so no other change lands in between). Throws policy::ConfigError
    /// (refused with its message) or any other exception (refused as unexpected).
    std::function<policy::Registry(const policy::Registry& in_force)> build;
    /// Called under the lock once the registry is swapped in (the xDS source keeps the
    /// domains it laid over the file's registry, for the next file reload).
    std::function<void()> on_applied;
};

/// Applies changes one at a time: build, the store's refusal (Backend::refusal) of the registry
/// that is about to replace the one in force, swap, ratelimitd_reloads_total counted, the new
/// registry's config_warnings logged, one audit entry, and the freed memory of the build given
/// back (return_freed_memory) whether applied or refused. A refused change leaves the registry
/// in force serving, with an error line. Catches every exception: the process that serves the
/// old config must not end on a bad change.
/// @par Thread Safety
/// apply() from any thread (the main thread reloads the file, the xDS client's thread applies
/// the control plane's configs); one change at a time.
class ConfigReloader {
public:
    /// `audit`: null for no audit entries.
    ConfigReloader(policy::RegistryHandle& registry, const store::Backend& backend, service::Metrics& metrics,
                   WarningContext warnings, audit::AuditTrail* audit);

    ReloadOutcome apply(const ConfigChange& change);

    /// The change of a file (or ERL mode's runtime directory) read by `load`, with `overlay`
    /// (when set) adjusting its registry before it is checked and swapped (xds_server: the
    /// control plane's domains stay in force over a reloaded file).
    static ConfigChange file_change(std::string_view source, std::string name, std::function<policy::Config()> load,
                                    std::function<void(policy::Registry&)> overlay = {});

private:
    ReloadOutcome try_apply(const ConfigChange& change);
    void audit_applied(const ConfigChange& change, const policy::Registry& before, const policy::Registry& after,
                       const std::string& digest) const;
    void audit_refused(const ConfigChange& change, const ReloadOutcome& outcome) const;

    policy::RegistryHandle& registry_;
    const store::Backend& backend_;
    service::Metrics& metrics_;
    const WarningContext warnings_;
    audit::AuditTrail* audit_;
    std::mutex mu_;  // one change at a time, from build to swap
};

}  // namespace ratelimitd::app
