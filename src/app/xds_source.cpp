// XdsSource: the control plane's domains into the registry handle, on the main thread (where
// SIGHUP reloads run too), so a reload and an update never interleave.
#include "ratelimitd/app/xds_source.hpp"
#include "ratelimitd/core/error.hpp"

#include "ratelimitd/app/config_audit.hpp"
#include "ratelimitd/config/setting_values.hpp"
#include "ratelimitd/core/log_value.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>


namespace ratelimitd::app {

namespace net = boost::asio;

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

XdsSource::XdsSource(net::io_context& main, xds::XdsClientOptions options, policy::RegistryHandle& registry,
                     const store::Backend& backend, audit::AuditTrail* audit)
    : main_(main), registry_(registry), backend_(backend), audit_(audit), server_(options.server) {
    auto sink = [this](std::shared_ptr<const policy::RlsDomains> domains,
                       const std::string& version) -> std::optional<std::string> {
        // The store may refuse what a rule asks, as a reload is refused: then a NACK.
        try {
            auto candidate = *registry_.current();
            candidate.domains = domains;
            if (auto refusal = backend_.refusal(candidate)) return refused(version, "refused by the store: " + *refusal);
        } catch (const std::exception& e) {
            return refused(version, std::string("cannot be checked: ") + e.what());
        }
        net::post(main_, [this, domains = std::move(domains), version] { apply(domains, version); });
        return std::nullopt;
    };
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

// On the client's thread (the trail takes any thread): the NACK's reason, recorded.
std::string XdsSource::refused(const std::string& version, std::string reason) const {
    if (audit_ != nullptr) {
        audit_->record("config_reload", audit::Actor{server_, false},
                       {{"source", config_source::xds}, {"outcome", "refused"}, {"version", version},
                        {"reason", reason}, {"digest", nullptr}});
    }
    return reason;
}

void XdsSource::overlay(policy::Registry& registry) const {
    registry.domains = with_denied_calls(domains_, registry.xds_charge_denied);
    registry.awaiting_xds = domains_ == nullptr;
}

void XdsSource::start() { client_->start(); }

void XdsSource::stop() { client_->stop(); }

void XdsSource::apply(std::shared_ptr<const policy::RlsDomains> domains, const std::string& version) {
    try {
        auto next = std::make_shared<policy::Registry>(*registry_.current());
        next->domains = with_denied_calls(domains, next->xds_charge_denied);
        next->awaiting_xds = false;
        domains_ = std::move(domains);
        const auto before = registry_.current();
        registry_.replace(next);
        if (audit_ != nullptr) audit_xds_applied(*audit_, audit::Actor{server_, false}, version, *before, *next);
        spdlog::info("xds: version={} in force, domains={}", log_value(version), domains_->by_name.size());
        // Each domain by name, as a file load names them (envoyproxy/ratelimit's "loading domain").
        for (const auto& [name, domain] : domains_->by_name) {
            spdlog::info("xds: domain loaded domain={} version={}", log_value(name), log_value(version));
        }
    } catch (const std::exception& e) {
        spdlog::error("xds: version={} not swapped in, the previous config keeps serving: {}", log_value(version),
                      e.what());
    }
}

}  // namespace ratelimitd::app
