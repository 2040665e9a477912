// What an Envoy rate limit service call asks (envoy.service.ratelimit.v3.RateLimitRequest),
// as the planner reads it. The gRPC transport fills it from the protobuf message; nothing
// here knows protobuf.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::policy {

/// One entry of a descriptor, e.g. ("remote_address", "10.0.0.1").
struct RlsEntry {
    std::string key;
    std::string value;
};

/// A limit the caller sends for one descriptor (RateLimitDescriptor.limit), as sent: the unit
/// is RlsUnit's number, checked by the planner.
struct RlsLimitOverride {
    std::uint32_t requests_per_unit = 0;
    std::uint32_t unit = 0;
};

/// One descriptor: its entries in order, its own hits_addend when the caller set one, and
/// the limit it sends instead of the config's, if any.
struct RlsDescriptor {
    std::vector<RlsEntry> entries;
    std::optional<std::uint64_t> hits_addend;
    std::optional<RlsLimitOverride> limit;
};

/// One ShouldRateLimit call: a domain and its descriptors, decided together.
struct RlsRequest {
    std::string domain;
    std::vector<RlsDescriptor> descriptors;
    std::uint64_t hits_addend = 0;  ///< 0 means 1, as Envoy sends it
};

}  // namespace ratelimitd::policy
