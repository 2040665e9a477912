// ConfigReloader: build under the lock, ask the store, swap, count, log, audit, trim; every
// failure refused and logged, the registry in force kept.
#include "ratelimitd/app/reload.hpp"

#include "ratelimitd/app/config_audit.hpp"
#include "ratelimitd/core/freed_memory.hpp"
#include "ratelimitd/core/log_value.hpp"
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <spdlog/spdlog.h>

#include <memory>
#include <utility>

namespace ratelimitd::app {

ConfigReloader::ConfigReloader(policy::RegistryHandle& registry, const store::Backend& backend,
                               service::Metrics& metrics, WarningContext warnings, audit::AuditTrail* audit)
    : registry_(registry), backend_(backend), metrics_(metrics), warnings_(warnings), audit_(audit) {}

ConfigChange ConfigReloader::file_change(std::string_view source, std::string name,
                                         std::function<policy::Config()> load,
                                         std::function<void(policy::Registry&)> overlay) {
    ConfigChange change{.source = source, .actor = audit::Actor{}, .name = std::move(name), .build = {}, .on_applied = {}};
    change.build = [load = std::move(load), overlay = std::move(overlay)](const policy::Registry&) {
        auto next = load();
        if (overlay) overlay(next.registry);
        return std::move(next.registry);
    };
    return change;
}

ReloadOutcome ConfigReloader::apply(const ConfigChange& change) {
    ReloadOutcome outcome;
    {
        std::lock_guard lock(mu_);
        outcome = try_apply(change);
    }
    if (!outcome.applied) {
        metrics_.count_reload(false);
        // A ConfigError's message names its file already; the others are named here.
        const bool named = outcome.reason.starts_with(change.name);
        const std::string label = change.source == config_source::xds ? "xds version " + change.name : change.name;
        spdlog::error("reload refused, the previous config keeps serving: {}{}", named ? "" : label + ": ",
                      outcome.reason);
        audit_refused(change, outcome);
    }
    // Whether applied or refused, the build's parse and the replaced registry are freed by
    // now: give their pages back (a refused 100 MB message must not stay resident).
    return_freed_memory();
    return outcome;
}

ReloadOutcome ConfigReloader::try_apply(const ConfigChange& change) {
    std::string digest;
    try {
        const auto before = registry_.current();
        auto next = std::make_shared<policy::Registry>(change.build(*before));
        digest = next->source_sha256.empty() ? "" : "sha256:" + next->source_sha256;
        // Asked of the registry that replaces `before`, the one in force under this lock.
        if (auto refusal = backend_.refusal(*next)) {
            // A control plane reads the NACK's reason without this process's log around it.
            return {false, change.source == config_source::xds ? "refused by the store: " + *refusal : *refusal, digest};
        }
        registry_.replace(next);
        if (change.on_applied) change.on_applied();
        metrics_.count_reload(true);
        // The Envoy domains come from envoy_config files too: the count shows they were read.
        spdlog::info("reloaded {}={} source={} policies={} domains={}",
                     change.source == config_source::xds ? "version" : "path", log_value(change.name), change.source,
                     next->policies.size(), next->domains ? next->domains->by_name.size() : 0);
        log_config_warnings(*next, warnings_);
        audit_applied(change, *before, *next, digest);
        return {true, "", digest};
    } catch (const policy::ConfigError& e) {
        return {false, e.what(), digest};
    } catch (const std::exception& e) {
        // Anything else (out of memory building the registry...) must not end the process
        // that serves the old config.
        return {false, std::string("unexpected failure (") + e.what() + ")", digest};
    }
}

void ConfigReloader::audit_applied(const ConfigChange& change, const policy::Registry& before,
                                   const policy::Registry& after, const std::string& digest) const {
    if (audit_ == nullptr) return;
    if (change.source == config_source::xds) {
        audit_xds_applied(*audit_, change.actor, change.name, before, after);
    } else {
        audit_config_applied(*audit_, change.source, change.actor, change.name, &before, after, digest);
    }
}

void ConfigReloader::audit_refused(const ConfigChange& change, const ReloadOutcome& outcome) const {
    if (audit_ == nullptr) return;
    if (change.source == config_source::xds) {
        audit_xds_refused(*audit_, change.actor, change.name, outcome.reason);
    } else {
        audit_config_refused(*audit_, change.source, change.actor, change.name, outcome.reason, outcome.digest);
    }
}

}  // namespace ratelimitd::app
