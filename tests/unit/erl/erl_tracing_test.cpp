// erl_tracing_overlay: envoyproxy/ratelimit's TRACING_* as ratelimitd's trace settings.
#include "ratelimitd/erl/erl_tracing.hpp"

#include <gtest/gtest.h>

namespace {

using ratelimitd::erl::erl_tracing_overlay;
using ratelimitd::erl::ErlTracing;

TEST(ErlTracing, EnabledMapsEveryVariableOneToOne) {
    const auto overlay = erl_tracing_overlay({true, "grpc", "RateLimit", "gateway", "rl-7", "0.25"});
    ASSERT_TRUE(overlay.has_value());
    EXPECT_EQ(overlay->at("RATELIMITD_TRACE_ENDPOINT"), "http://localhost:4317") << "its SDK's default";
    EXPECT_EQ(overlay->at("OTEL_EXPORTER_OTLP_PROTOCOL"), "grpc");
    EXPECT_EQ(overlay->at("OTEL_TRACES_SAMPLER"), "parentbased_traceidratio");
    EXPECT_EQ(std::stod(overlay->at("OTEL_TRACES_SAMPLER_ARG")), 0.25);
    EXPECT_EQ(overlay->at("OTEL_SERVICE_NAME"), "RateLimit");
    EXPECT_EQ(overlay->at("RATELIMITD_TRACE_SERVICE_NAMESPACE"), "gateway");
    EXPECT_EQ(overlay->at("RATELIMITD_TRACE_SERVICE_INSTANCE_ID"), "rl-7");
    EXPECT_EQ(overlay->count("OTEL_EXPORTER_OTLP_ENDPOINT"), 0u) << "the process's own is read as it is";
}

TEST(ErlTracing, HttpIsTheDefaultAndTheRateIsClamped) {
    const auto overlay = erl_tracing_overlay({true, "", "RateLimit", "", "", "7"});
    ASSERT_TRUE(overlay.has_value());
    EXPECT_EQ(overlay->at("RATELIMITD_TRACE_ENDPOINT"), "http://localhost:4318");
    EXPECT_EQ(overlay->at("OTEL_EXPORTER_OTLP_PROTOCOL"), "http/protobuf");
    EXPECT_EQ(std::stod(overlay->at("OTEL_TRACES_SAMPLER_ARG")), 1.0);
    const auto& id = overlay->at("RATELIMITD_TRACE_SERVICE_INSTANCE_ID");
    ASSERT_EQ(id.size(), 36u) << "a random UUID when unset, as its uuid.NewRandom()";
    EXPECT_EQ(id[14], '4');
}

TEST(ErlTracing, DisabledTurnsTracingOffWhateverOtelSays) {
    const auto overlay = erl_tracing_overlay({false, "udp", "RateLimit", "", "", "x"});
    ASSERT_TRUE(overlay.has_value()) << "nothing else is read when it is off, as there";
    EXPECT_EQ(overlay->at("RATELIMITD_TRACE_ENDPOINT"), "");
    EXPECT_EQ(overlay->at("OTEL_EXPORTER_OTLP_ENDPOINT"), "");
}

TEST(ErlTracing, AnUnknownProtocolOrRateIsRefusedNamingTheVariable) {
    const auto protocol = erl_tracing_overlay({true, "udp", "RateLimit", "", "", "1"});
    ASSERT_FALSE(protocol.has_value());
    EXPECT_EQ(protocol.error().detail.rfind("TRACING_EXPORTER_PROTOCOL: ", 0), 0u) << protocol.error().detail;
    const auto rate = erl_tracing_overlay({true, "http", "RateLimit", "", "", "often"});
    ASSERT_FALSE(rate.has_value());
    EXPECT_EQ(rate.error().detail.rfind("TRACING_SAMPLING_RATE: ", 0), 0u) << rate.error().detail;
}

}  // namespace
