// xds_server: the Envoy domains of the registry come from an xDS control plane. This lays the
// last config it gave over the config file's registry, at start, on each accepted config and
// on each reload of the file, so neither source undoes the other.
#pragma once

#include "ratelimitd/audit/audit_trail.hpp"
#include "ratelimitd/config/settings.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/registry_handle.hpp"
#include "ratelimitd/store/backend.hpp"
#include "ratelimitd/xds/xds_client.hpp"
#include "ratelimitd/xds/xds_metrics.hpp"

#include <boost/asio/io_context.hpp>

#include <memory>
#include <optional>
#include <string>

namespace ratelimitd::app {

/// The client's options from the settings, or why they cannot work (xds_tls without
/// xds_server, a certificate without its key, a file that cannot be read), naming the setting.
result<xds::XdsClientOptions> xds_client_options(const config::Settings& settings);

/// @par Thread Safety
/// Construct, overlay(), start() and stop() on the main thread (the one that runs `main` and
/// reloads); the client's thread only posts to it.
class XdsSource {
public:
    /// `audit`, when given, gets one entry per config applied or refused by the store (a
    /// config the client NACKs as malformed never reaches it: the xDS metrics count those).
    XdsSource(boost::asio::io_context& main, xds::XdsClientOptions options, policy::RegistryHandle& registry,
              const store::Backend& backend, audit::AuditTrail* audit = nullptr);

    /// The file's registry as it must serve: the control plane's last domains, or, before the
    /// first, none and awaiting_xds.
    void overlay(policy::Registry& registry) const;
    void start();
    void stop();

    [[nodiscard]] const xds::XdsMetrics& metrics() const noexcept { return metrics_; }

private:
    /// On the main thread: the current registry with these domains swapped in.
    void apply(std::shared_ptr<const policy::RlsDomains> domains, const std::string& version);
    /// A config the store refuses: its audit entry; returns `reason` (the NACK's).
    std::string refused(const std::string& version, std::string reason) const;

    boost::asio::io_context& main_;
    policy::RegistryHandle& registry_;
    const store::Backend& backend_;
    audit::AuditTrail* audit_;
    std::string server_;  // the control plane, the actor of its entries
    xds::XdsMetrics metrics_;
    std::shared_ptr<const policy::RlsDomains> domains_;  // main thread only
    std::unique_ptr<xds::XdsClient> client_;
};

}  // namespace ratelimitd::app
