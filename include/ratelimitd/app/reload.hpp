// Reloading the config file (SIGHUP, or a change on disk).
#pragma once

#include "ratelimitd/app/config_warnings.hpp"
#include "ratelimitd/policy/registry_handle.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/service/metrics.hpp"
#include "ratelimitd/store/backend.hpp"

#include <functional>
#include <string>

namespace ratelimitd::app {

/// What one reload came to, for the audit trail.
struct ReloadOutcome {
    bool applied = false;
    std::string reason;  ///< refused: the error line's cause (never a secret: messages do not echo them)
    std::string digest;  ///< "sha256:<hex>" of the file read, when it was read; else empty
};

/// Loads `path` again and swaps its registry in. A file that fails validation, or asks what
/// the store cannot do (Backend::refusal), is refused with an error line and the previous
/// registry keeps serving. Counts the outcome in `metrics`; after a swap, logs the new
/// registry's config_warnings. Catches every exception: the process that serves the old
/// config must not end on a bad reload. `load` is what start read the file with; `overlay`,
/// when set, adjusts the new registry before it is checked and swapped (xds_server: the
/// control plane's domains stay in force over a reloaded file).
ReloadOutcome reload_config(const std::string& path, policy::RegistryHandle& registry, const store::Backend& backend,
                   service::Metrics& metrics, const WarningContext& warnings, const policy::LoadOptions& load = {},
                   const std::function<void(policy::Registry&)>& overlay = {});

/// The same with the registry read by `load` (ERL mode's runtime directory), named `name` in
/// the log lines.
ReloadOutcome reload_config(const std::string& name, const std::function<policy::Config()>& load,
                   policy::RegistryHandle& registry, const store::Backend& backend, service::Metrics& metrics,
                   const WarningContext& warnings, const std::function<void(policy::Registry&)>& overlay = {});

}  // namespace ratelimitd::app
