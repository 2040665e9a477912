// XdsSource: the control plane's domains into the registry by the reloader's road (where file
// reloads go too, one change at a time), before the client ACKs them.
#include "ratelimitd/app/xds_source.hpp"
#include "ratelimitd/core/error.hpp"

#include "ratelimitd/app/config_audit.hpp"
#include "ratelimitd/config/setting_values.hpp"
#include "ratelimitd/core/log_value.hpp"
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/notify_domain_rules.hpp"
#include "ratelimitd/xds/config_decoder.hpp"

#include <spdlog/spdlog.h>


namespace ratelimitd::app {

namespace {


}  // namespace

result<xds::XdsClientOptions> xds_client_options(const config::Settings& s) {
    const bool tls_set = s.xds_tls || !s.xds_tls_ca.empty() || !s.xds_tls_cert.empty() || !s.xds_tls_key.empty() ||
                         !s.xds_tls_server_san.empty();
    if (!s.xds_server) {
        if (tls_set) return invalid_request("xds_tls settings are set but xds_server is not: there is no control plane to reach");
        return invalid_request("xds_server: not set");
    }
    if (!s.xds_tls && tls_set) return invalid_request("xds_tls_ca/_cert/_key/_server_san are set but xds_tls is off");
    if (s.xds_tls_cert.empty() != s.xds_tls_key.empty()) {
        return invalid_request("xds_tls_cert and xds_tls_key: a client certificate needs both");
    }
    // Checked whole now (parse, key matches certificate), as each reconnect checks them again.
    if (auto refusal = xds::XdsTlsFiles::refusal({s.xds_tls_ca, s.xds_tls_cert, s.xds_tls_key})) return invalid_request(*refusal);
    auto metadata = config::parse_pairs(s.xds_node_metadata, '=', "xds_node_metadata");
    if (!metadata) return metadata.error();
    auto headers = config::parse_pairs(s.xds_headers, ':', "xds_headers");
    if (!headers) return headers.error();
    xds::XdsClientOptions o;
    o.server = *s.xds_server;
    o.node_id = s.xds_node_id;
    o.node_metadata = std::move(*metadata);
    o.user_agent_version = RATELIMITD_VERSION;
    o.tls = s.xds_tls;
    o.tls_ca_file = s.xds_tls_ca;
    o.tls_cert_file = s.xds_tls_cert;
    o.tls_key_file = s.xds_tls_key;
    o.tls_server_san = s.xds_tls_server_san;
    o.connect_timeout = s.xds_retry_interval;
    o.backoff = {.initial = s.xds_backoff_initial,
                 .max = s.xds_backoff_max,
                 .factor = s.xds_backoff_random_factor,
                 .jitter = s.xds_backoff_jitter};
    o.max_message_bytes = s.xds_max_message_bytes;
    o.headers = std::move(*headers);
    return o;
}

XdsSource::XdsSource(xds::XdsClientOptions options, ConfigReloader& reloader)
    : reloader_(reloader), server_(options.server) {
    auto sink = [this](const envoy::service::discovery::v3::DiscoveryResponse& response) { return apply(response); };
    client_ = std::make_unique<xds::XdsClient>(std::move(options), std::move(sink), metrics_);
}

namespace {

// The control plane sends the rules; the file says how a denied call is charged.
std::shared_ptr<const policy::RlsDomains> with_denied_calls(std::shared_ptr<const policy::RlsDomains> domains,
                                                            bool charge_denied) {
    if (domains == nullptr || domains->charge_denied == charge_denied) return domains;
    auto copy = std::make_shared<policy::RlsDomains>(*domains);
    copy->charge_denied = charge_denied;
    return copy;
}

}  // namespace

void XdsSource::overlay(policy::Registry& registry) const {
    registry.domains = policy::with_xds_thresholds(with_denied_calls(domains_, registry.xds_charge_denied),
                                                   registry.notify.get());
    registry.awaiting_xds = domains_ == nullptr;
}

void XdsSource::start() { client_->start(); }

void XdsSource::stop() { client_->stop(); }

result<std::size_t> XdsSource::apply(const envoy::service::discovery::v3::DiscoveryResponse& response) {
    const std::string& version = response.version_info();
    ConfigChange change{.source = config_source::xds,
                        .actor = audit::Actor{server_, false},
                        .name = version,
                        .build = {},
                        .on_applied = {}};
    std::shared_ptr<const policy::RlsDomains> domains;
    // Validated as a file is, on the road; only the Envoy domains change: the file's registry
    // in force keeps the rest.
    change.build = [&response, &domains](const policy::Registry& in_force) {
        auto decoded = xds::decode_domains(response);
        if (!decoded) throw policy::ConfigError(decoded.error().detail);
        domains = std::move(*decoded);
        policy::Registry next = in_force;
        next.domains = policy::with_xds_thresholds(with_denied_calls(domains, next.xds_charge_denied), next.notify.get());
        next.awaiting_xds = false;
        return next;
    };
    change.on_applied = [this, &domains] { domains_ = domains; };
    const auto outcome = reloader_.apply(change);
    if (!outcome.applied) return Problem{errc::invalid_request, outcome.reason};
    // Each domain by name, as a file load names them (envoyproxy/ratelimit's "loading domain").
    spdlog::info("xds: version={} in force, domains={}", log_value(version), domains->by_name.size());
    for (const auto& [name, domain] : domains->by_name) {
        spdlog::info("xds: domain loaded domain={} version={}", log_value(name), log_value(version));
    }
    return domains->by_name.size();
}

}  // namespace ratelimitd::app
