// reload_config: load, ask the store, swap, count; every failure refused and logged.
#include "ratelimitd/app/reload.hpp"

#include "ratelimitd/app/config_warnings.hpp"
#include "ratelimitd/core/freed_memory.hpp"
#include "ratelimitd/core/log_value.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <spdlog/spdlog.h>

#include <memory>

namespace ratelimitd::app {

ReloadOutcome reload_config(const std::string& path, policy::RegistryHandle& registry, const store::Backend& backend,
                   service::Metrics& metrics, const WarningContext& warnings, const policy::LoadOptions& load,
                   const std::function<void(policy::Registry&)>& overlay) {
    return reload_config(
        path, [&path, &load] { return policy::load_config(path, load); }, registry, backend, metrics, warnings,
        overlay);
}

namespace {

ReloadOutcome try_reload(const std::string& path, const std::function<policy::Config()>& load,
                         policy::RegistryHandle& registry, const store::Backend& backend, service::Metrics& metrics,
                         const WarningContext& warnings, const std::function<void(policy::Registry&)>& overlay) {
    try {
        auto next = load();
        if (overlay) overlay(next.registry);
        const std::string digest = next.registry.source_sha256.empty() ? "" : "sha256:" + next.registry.source_sha256;
        if (auto refusal = backend.refusal(next.registry)) {
            metrics.count_reload(false);
            spdlog::error("reload refused, the previous config keeps serving: {}: {}", path, *refusal);
            return {false, *refusal, digest};
        }
        const auto count = next.registry.policies.size();
        // The Envoy domains come from envoy_config files too: the count shows they were read.
        const auto domains = next.registry.domains ? next.registry.domains->by_name.size() : 0;
        registry.replace(std::make_shared<const policy::Registry>(std::move(next.registry)));
        metrics.count_reload(true);
        spdlog::info("reloaded path={} policies={} domains={}", log_value(path), count, domains);
        log_config_warnings(*registry.current(), warnings);
        return {true, "", digest};
    } catch (const policy::ConfigError& e) {
        metrics.count_reload(false);
        spdlog::error("reload refused, the previous config keeps serving: {}", e.what());
        return {false, e.what(), ""};
    } catch (const std::exception& e) {
        // Anything else (out of memory swapping the registry...) must not end the process
        // that serves the old config: an exception here would leave the io_context's run().
        metrics.count_reload(false);
        spdlog::error("reload refused, the previous config keeps serving: {}: unexpected failure ({})", path,
                      e.what());
        return {false, std::string("unexpected failure (") + e.what() + ")", ""};
    }
}

}  // namespace

ReloadOutcome reload_config(const std::string& path, const std::function<policy::Config()>& load,
                   policy::RegistryHandle& registry, const store::Backend& backend, service::Metrics& metrics,
                   const WarningContext& warnings, const std::function<void(policy::Registry&)>& overlay) {
    auto outcome = try_reload(path, load, registry, backend, metrics, warnings, overlay);
    // Whether applied or refused, the parse's nodes are freed by now: give their pages back.
    return_freed_memory();
    return outcome;
}

}  // namespace ratelimitd::app
