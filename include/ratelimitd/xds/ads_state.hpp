// The state-of-the-world ADS protocol of one resource type, without I/O: which request opens a
// stream, and what ACK or NACK answers each response (docs/envoy.md, "Rules from an xDS
// control plane"). The driver (xds_client.hpp) sends what it returns.
#pragma once

#include <envoy/service/discovery/v3/discovery.pb.h>

#include <cstdint>
#include <optional>
#include <string>

namespace ratelimitd::xds {

using envoy::service::discovery::v3::DiscoveryRequest;
using envoy::service::discovery::v3::DiscoveryResponse;

/// The type URL of envoyproxy/ratelimit's config resource.
inline constexpr const char* rate_limit_config_type_url = "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig";

/// A NACK's error_detail.message is cut to this many bytes (a control plane logs it).
inline constexpr std::size_t max_error_detail_bytes = 4096;

/// The protocol: the version last accepted (kept across streams, so a new stream tells the
/// control plane what this client holds), and whether the node has been sent on this stream.
/// Each response is answered once: accept() (ACK: its version and nonce) or reject() (NACK:
/// the previous version, its nonce, the reason); nothing changes on a NACK but the counters.
/// @par Thread Safety
/// One thread (the driver's).
class AdsState {
public:
    AdsState(envoy::config::core::v3::Node node, std::string type_url = rate_limit_config_type_url);

    /// The first request of a new stream: the node, the type (every resource of it), the
    /// version last accepted ("" before any), no nonce.
    DiscoveryRequest open_stream();

    /// Why this response cannot be taken before its resources are read (another type URL), or
    /// nothing.
    [[nodiscard]] std::optional<std::string> precheck(const DiscoveryResponse& response) const;

    /// The ACK of a response whose resources are now in force.
    DiscoveryRequest accept(const DiscoveryResponse& response);
    /// The NACK of a response that was refused for `why`; the version in force stays.
    DiscoveryRequest reject(const DiscoveryResponse& response, const std::string& why);

    /// "" before the first accepted response.
    [[nodiscard]] const std::string& accepted_version() const noexcept { return accepted_version_; }
    [[nodiscard]] std::uint64_t accepted_count() const noexcept { return accepted_; }
    [[nodiscard]] std::uint64_t rejected_count() const noexcept { return rejected_; }

private:
    DiscoveryRequest request(const std::string& nonce);

    envoy::config::core::v3::Node node_;
    std::string type_url_;
    std::string accepted_version_;
    bool node_sent_ = false;
    std::uint64_t accepted_ = 0;
    std::uint64_t rejected_ = 0;
};

}  // namespace ratelimitd::xds
