// xds_server: the Envoy domains of the registry come from an xDS control plane. This lays the
// last config it gave over the config file's registry, at start, on each accepted config and
// on each reload of the file, so neither source undoes the other.
#pragma once

#include "ratelimitd/app/reload.hpp"
#include "ratelimitd/config/settings.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/xds/xds_client.hpp"
#include "ratelimitd/xds/xds_metrics.hpp"

#include <memory>
#include <optional>
#include <string>

namespace ratelimitd::app {

/// The client's options from the settings, or why they cannot work (xds_tls without
/// xds_server, a certificate without its key, a file that cannot be read), naming the setting.
result<xds::XdsClientOptions> xds_client_options(const config::Settings& settings);

/// @par Thread Safety
/// Construct, start() and stop() on the main thread; overlay() runs within the reloader's
/// lock (a file reload's build), and so does each config the client applies, on its thread.
class XdsSource {
public:
    /// Each response of the right type goes the reloader's road (the same as a file reload:
    /// decoded and validated, the store's refusal, swap, counted, warnings, audit, freed memory
    /// given back), on the client's thread, before it is answered: an ACK says the version
    /// serves checks, a NACK names what was refused.
    XdsSource(xds::XdsClientOptions options, ConfigReloader& reloader);

    /// The file's registry as it must serve: the control plane's last domains, or, before the
    /// first, none and awaiting_xds. Called by a file reload's build, under the reloader's lock.
    void overlay(policy::Registry& registry) const;
    void start();
    void stop();

    [[nodiscard]] const xds::XdsMetrics& metrics() const noexcept { return metrics_; }

private:
    /// On the client's thread: the registry in force with the response's domains swapped in;
    /// their number once they serve, or why not (the NACK's reason).
    result<std::size_t> apply(const envoy::service::discovery::v3::DiscoveryResponse& response);

    ConfigReloader& reloader_;
    std::string server_;  // the control plane, the actor of its entries
    xds::XdsMetrics metrics_;
    std::shared_ptr<const policy::RlsDomains> domains_;  // under the reloader's lock
    std::unique_ptr<xds::XdsClient> client_;
};

}  // namespace ratelimitd::app
