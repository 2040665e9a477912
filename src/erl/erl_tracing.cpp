// ERL's tracing: its trace.go's choices (ParentBased(TraceIDRatioBased(rate)), the resource's
// three service attributes, a random instance id) spelled as ratelimitd's settings.
#include "ratelimitd/erl/erl_tracing.hpp"

#include "ratelimitd/erl/go_values.hpp"

#include <cstdint>
#include <cstdio>
#include <random>

namespace ratelimitd::erl {
namespace {

// A version 4 UUID, as its uuid.NewRandom() gives when TRACING_SERVICE_INSTANCE_ID is empty.
std::string random_uuid() {
    std::random_device device;
    std::uint32_t words[4];
    for (auto& w : words) w = device();
    words[1] = (words[1] & 0xffff0fffu) | 0x00004000u;  // version 4
    words[2] = (words[2] & 0x3fffffffu) | 0x80000000u;  // RFC 4122 variant
    char text[37];
    std::snprintf(text, sizeof text, "%08x-%04x-%04x-%04x-%04x%08x", words[0], words[1] >> 16, words[1] & 0xffffu,
                  words[2] >> 16, words[2] & 0xffffu, words[3]);
    return text;
}

}  // namespace

result<std::map<std::string, std::string>> erl_tracing_overlay(const ErlTracing& tracing) {
    std::map<std::string, std::string> overlay;
    if (!tracing.enabled) {
        // Empty counts as unset, and the overlay is read before the process environment.
        overlay["RATELIMITD_TRACE_ENDPOINT"] = "";
        overlay["OTEL_EXPORTER_OTLP_ENDPOINT"] = "";
        return overlay;
    }
    const bool grpc = tracing.protocol == "grpc";
    if (!grpc && tracing.protocol != "http" && !tracing.protocol.empty()) {
        return invalid_request("TRACING_EXPORTER_PROTOCOL: expected http or grpc, got " + tracing.protocol);
    }
    const auto rate = parse_go_number(tracing.sampling_rate);
    if (!rate) return invalid_request("TRACING_SAMPLING_RATE: expected a number, got " + tracing.sampling_rate);
    const double clamped = *rate < 0 ? 0 : *rate > 1 ? 1 : *rate;
    overlay["RATELIMITD_TRACE_ENDPOINT"] = grpc ? "http://localhost:4317" : "http://localhost:4318";
    overlay["OTEL_EXPORTER_OTLP_PROTOCOL"] = grpc ? "grpc" : "http/protobuf";
    overlay["OTEL_TRACES_SAMPLER"] = "parentbased_traceidratio";
    overlay["OTEL_TRACES_SAMPLER_ARG"] = std::to_string(clamped);
    overlay["OTEL_SERVICE_NAME"] = tracing.service_name;
    overlay["RATELIMITD_TRACE_SERVICE_NAMESPACE"] = tracing.service_namespace;
    overlay["RATELIMITD_TRACE_SERVICE_INSTANCE_ID"] =
        tracing.service_instance_id.empty() ? random_uuid() : tracing.service_instance_id;
    return overlay;
}

}  // namespace ratelimitd::erl
