// Settings for the process: the table's precedence plus the defaults that need the machine.
#include "ratelimitd/app/settings.hpp"

#include "ratelimitd/app/cpu_count.hpp"
#include "ratelimitd/store/backend_factory.hpp"

#include <string>

namespace ratelimitd::app {

result<Settings> resolve_settings(const CommandLine& cl, const policy::FileSettings& file, const EnvLookup& env) {
    Settings defaults;
    defaults.threads = available_cpus();
    auto settings = config::apply_precedence(cl, file, env, defaults);
    if (!settings) return settings;
    // Both belong to envoyproxy/ratelimit's keys: without its layout nobody would read them.
    if (settings->envoy_key_layout != "envoyproxy-ratelimit" &&
        (!settings->envoy_key_prefix.empty() || settings->envoy_expiration_jitter.count() != 0)) {
        return Problem{errc::invalid_request,
                       std::string(!settings->envoy_key_prefix.empty() ? "envoy_key_prefix" : "envoy_expiration_jitter") +
                           ": only with envoy_key_layout: envoyproxy-ratelimit (the keys it shapes); envoy_key_layout is " +
                           settings->envoy_key_layout};
    }
    return settings;
}

namespace {

policy::RlsStoreError store_error(const Settings& settings, bool erl_or_xds) {
    if (!erl_or_xds) return policy::RlsStoreError::on_store_error;
    if (settings.envoy_store_error == "allow") return policy::RlsStoreError::allow;
    if (settings.envoy_store_error == "deny") return policy::RlsStoreError::deny;
    return policy::RlsStoreError::unavailable;
}

}  // namespace

policy::EnvoyKeys envoy_keys(const Settings& settings, bool erl_or_xds) {
    return policy::EnvoyKeys{
        .erl = settings.envoy_key_layout == "envoyproxy-ratelimit",
        .prefix = settings.envoy_key_prefix,
        .jitter = std::chrono::duration_cast<std::chrono::seconds>(settings.envoy_expiration_jitter),
        .shadow_all = settings.envoy_shadow_mode,
        .store_error = store_error(settings, erl_or_xds),
        .quota_all = settings.envoy_quota_mode,
    };
}

rls::ResponseHeaders grpc_response_headers(const Settings& settings) {
    if (settings.grpc_response_headers == "none") return rls::HeaderSet::none;
    if (settings.grpc_response_headers == "erl") {
        return {rls::HeaderSet::erl,
                {settings.grpc_limit_header, settings.grpc_remaining_header, settings.grpc_reset_header}};
    }
    return settings.grpc_x_ratelimit_headers ? rls::HeaderSet::ietf_and_x : rls::HeaderSet::ietf;
}

const char* usage() {
    static const std::string text = config::usage() + "\n--redis takes one of:\n" + store::backend_usage();
    return text.c_str();
}

}  // namespace ratelimitd::app
