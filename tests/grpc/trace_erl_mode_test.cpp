// ERL mode with Envoy Gateway's tracing environment (the TRACING_* and OTEL_EXPORTER_OTLP_*
// variables it sets on its rate limit Deployment when telemetry.tracing is on): ShouldRateLimit's
// spans reach the collector with the resource those variables name.
#include "grpc/erl_mode_fixture.hpp"
#include "support/otlp_receiver.hpp"

#include <fstream>

namespace ratelimitd::test::trace_erl_mode_test {
namespace {

TEST_F(ErlModeTest, EnvoyGatewaysTracingEnvironmentExportsSpans) {
    OtlpReceiver receiver;
    std::ofstream(config_dir() / "gateway.yaml")
        << "domain: gateway\ndescriptors:\n  - key: client\n    rate_limit: {unit: hour, requests_per_unit: 3}\n";
    vars_["TRACING_ENABLED"] = "true";
    vars_["TRACING_EXPORTER_PROTOCOL"] = "http";
    vars_["TRACING_SERVICE_NAME"] = "envoy-ratelimit";
    vars_["TRACING_SERVICE_NAMESPACE"] = "envoy-gateway-system";
    vars_["TRACING_SERVICE_INSTANCE_ID"] = "envoy-ratelimit-7d9f-abcde";
    vars_["TRACING_SAMPLING_RATE"] = "1";
    vars_["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint();
    serve();
    ASSERT_EQ(call("gateway", {{{"client", "c1"}}}).overall_code(), RlsResponse::OK);
    ASSERT_TRUE(wait_until([&] { return !receiver.spans().empty(); }, std::chrono::seconds(30))) << process_.log();
    const auto spans = receiver.server_spans();
    ASSERT_EQ(spans.size(), 1u);
    EXPECT_EQ(receiver.spans().size(), 2u) << "and its store call's span";
    EXPECT_EQ(spans[0].span.name(), "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit");
    EXPECT_EQ(attribute(spans[0].span, "ratelimit.domain"), "gateway");
    const auto store = receiver.spans_of_kind(opentelemetry::proto::trace::v1::Span::SPAN_KIND_CLIENT);
    ASSERT_EQ(store.size(), 1u);
    EXPECT_EQ(attribute(store[0].span, "ratelimit.remaining"), "2");
    EXPECT_EQ(spans[0].resource.at("service.name"), "envoy-ratelimit");
    EXPECT_EQ(spans[0].resource.at("service.namespace"), "envoy-gateway-system");
    EXPECT_EQ(spans[0].resource.at("service.instance.id"), "envoy-ratelimit-7d9f-abcde");
    EXPECT_EQ(process_.log().find("tracing is not supported"), std::string::npos);
}

TEST_F(ErlModeTest, TracingDisabledExportsNothingWhateverOtelSays) {
    OtlpReceiver receiver;
    std::ofstream(config_dir() / "gateway.yaml")
        << "domain: gateway\ndescriptors:\n  - key: client\n    rate_limit: {unit: hour, requests_per_unit: 3}\n";
    vars_["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint();
    serve();
    ASSERT_EQ(call("gateway", {{{"client", "c1"}}}).overall_code(), RlsResponse::OK);
    // Nothing to await: tracing off logs no "tracing:" line, which an export would need.
    EXPECT_EQ(process_.log().find("tracing:"), std::string::npos) << process_.log();
    EXPECT_EQ(receiver.http().count(), 0u);
}

}  // namespace
}  // namespace ratelimitd::test::trace_erl_mode_test
