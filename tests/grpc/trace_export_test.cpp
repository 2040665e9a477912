// Traces end to end: the real binary, a real redis-server and a small OTLP/HTTP receiver
// (support/otlp_receiver.hpp). A check's span arrives in the caller's trace, with the HTTP
// conventions' and ratelimit.* attributes; unsampled callers record nothing; a receiver that is
// down costs the checks nothing, and every span it could not take is counted.
#include "support/http_client.hpp"
#include "support/nginx.hpp"
#include "support/metrics_text.hpp"
#include "support/otlp_receiver.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

namespace ratelimitd::test::trace_export_test {
namespace {

const char* const trace_config = R"(
prefix: rl
policies:
  tb:
    algorithm: token_bucket
    limit: 20
    window: 24h  # one token back every 72 min: none while a test runs, however slow the machine
  wide:
    algorithm: fixed_window
    limit: 1000000
    window: 1h
)";

constexpr const char* trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* parent_id = "00f067aa0ba902b7";

// Exports every 1 s (the default schedule delay): a span is awaited, never slept for.
constexpr std::chrono::seconds export_bound{30};

std::vector<std::string> tracing_args(const OtlpReceiver& receiver, const std::string& ratio) {
    return {"--trace-endpoint", receiver.endpoint(), "--trace-sampler-arg", ratio, "--trace-service-namespace", "edge",
            "--trace-service-instance-id", "rl-1"};
}

// The traced check's server span: HTTP conventions, the policy and verdict, the resource, and
// never the tenant.
void expect_check_server_span(const ReceivedSpan& received) {
    const auto& span = received.span;
    EXPECT_EQ(hex(span.trace_id()), trace_id);
    EXPECT_EQ(hex(span.parent_span_id()), parent_id);
    EXPECT_EQ(span.span_id().size(), 8u);
    EXPECT_EQ(span.trace_state(), "rojo=1");
    EXPECT_EQ(span.name(), "GET /v1/check");
    EXPECT_EQ(span.kind(), opentelemetry::proto::trace::v1::Span::SPAN_KIND_SERVER);
    EXPECT_LE(span.start_time_unix_nano(), span.end_time_unix_nano());
    EXPECT_EQ(attribute(span, "http.request.method"), "GET");
    EXPECT_EQ(attribute(span, "http.route"), "/v1/check");
    EXPECT_EQ(attribute(span, "url.path"), "/v1/check") << "the query names the tenant: never in a span";
    EXPECT_EQ(attribute(span, "http.response.status_code"), "200");
    EXPECT_EQ(attribute(span, "ratelimit.policy"), "tb");
    EXPECT_EQ(attribute(span, "ratelimit.verdict"), "allowed");
    EXPECT_EQ(attribute(span, "ratelimit.remaining"), "") << "the numbers are the store span's only";
    EXPECT_EQ(span.attributes_size(), 7) << "five HTTP attributes, the policy and the verdict";
    for (const auto& kv : span.attributes()) {
        EXPECT_EQ(kv.value().string_value().find("t1"), std::string::npos) << kv.key() << " names the tenant";
    }
    EXPECT_EQ(received.resource.at("service.name"), "ratelimitd");
    EXPECT_EQ(received.resource.at("service.namespace"), "edge");
    EXPECT_EQ(received.resource.at("service.instance.id"), "rl-1");
    EXPECT_EQ(received.resource.at("service.version"), "0.1.0");
}

// The traced check's store call: the server span's child, inside its time, with the numbers.
void expect_store_call_span(const ReceivedSpan& received, const opentelemetry::proto::trace::v1::Span& span) {
    const auto& call = received.span;
    EXPECT_EQ(call.trace_id(), span.trace_id());
    EXPECT_EQ(call.parent_span_id(), span.span_id()) << "the store call is the check span's child";
    EXPECT_EQ(call.name(), "ratelimit.store redis");
    EXPECT_LE(span.start_time_unix_nano(), call.start_time_unix_nano());
    EXPECT_LE(call.start_time_unix_nano(), call.end_time_unix_nano());
    EXPECT_LE(call.end_time_unix_nano(), span.end_time_unix_nano());
    EXPECT_EQ(attribute(call, "db.system.name"), "redis");
    EXPECT_EQ(attribute(call, "ratelimit.store"), "redis");
    EXPECT_EQ(attribute(call, "ratelimit.policy"), "tb");
    EXPECT_EQ(attribute(call, "ratelimit.algorithm"), "token_bucket");
    EXPECT_EQ(attribute(call, "ratelimit.limit"), "20");
    EXPECT_EQ(attribute(call, "ratelimit.remaining"), "19");
    EXPECT_EQ(attribute(call, "ratelimit.cost"), "1");
    EXPECT_EQ(attribute(call, "ratelimit.degraded"), "false");
    EXPECT_EQ(attribute(call, "ratelimit.fail_mode"), "allow");
    EXPECT_EQ(attribute(call, "ratelimit.cache_hit"), "false");
    EXPECT_EQ(attribute(call, "ratelimit.verdict"), "allowed");
    for (const auto& kv : call.attributes()) {
        EXPECT_EQ(kv.value().string_value().find("t1"), std::string::npos) << kv.key() << " names the tenant";
    }
}

TEST(TraceExport, ACheckSpanIsAChildOfTheCallersSpan) {
    RedisServer redis;
    OtlpReceiver receiver;
    // Ratio 0: only a caller's sampled trace is followed (parent based).
    Ratelimitd server(trace_config, redis.url(), tracing_args(receiver, "0"));
    HttpClient client(server.port());
    const std::string traceparent = std::string("00-") + trace_id + "-" + parent_id + "-01";
    ASSERT_EQ(client.get("/v1/check?policy=tb&tenant=t1", {{"traceparent", traceparent}, {"tracestate", "rojo=1"}}).status,
              200);
    ASSERT_EQ(client.get("/v1/check?policy=tb&tenant=t1").status, 200) << "no parent at ratio 0: not traced";
    ASSERT_EQ(client.get("/v1/check?policy=tb&tenant=t1", {{"traceparent", std::string("00-") + trace_id + "-" +
                                                                                parent_id + "-00"}})
                  .status,
              200)
        << "an unsampled parent: not traced";
    ASSERT_TRUE(wait_until([&] { return !receiver.spans().empty(); }, export_bound));
    // The two untraced checks were decided before the traced one was exported: had they made
    // spans, they would be in that batch or queued with it. The traced one made two, submitted
    // together: its server span and its store call's.
    ASSERT_EQ(receiver.spans().size(), 2u);
    const auto spans = receiver.server_spans();
    ASSERT_EQ(spans.size(), 1u);
    expect_check_server_span(spans[0]);
    EXPECT_EQ(receiver.request_lines().front(), "POST /v1/traces application/x-protobuf");
    const auto store = receiver.spans_of_kind(opentelemetry::proto::trace::v1::Span::SPAN_KIND_CLIENT);
    ASSERT_EQ(store.size(), 1u) << "Redis is outside the process: a client span";
    expect_store_call_span(store[0], spans[0].span);
}

TEST(TraceExport, ADenialIsASpanWithoutErrorAndAMalformedParentARoot) {
    RedisServer redis;
    OtlpReceiver receiver;
    Ratelimitd server(trace_config, redis.url(), tracing_args(receiver, "1"));
    HttpClient client(server.port());
    for (int i = 0; i < 20; ++i) ASSERT_EQ(client.get("/v1/check?policy=tb&tenant=t2").status, 200);
    ASSERT_EQ(client.get("/v1/check?policy=tb&tenant=t2", {{"traceparent", "00-NOT-A-PARENT"}}).status, 429);
    ASSERT_TRUE(wait_until([&] { return receiver.server_spans().size() == 21; }, export_bound));
    const auto spans = receiver.server_spans();
    const auto& denied = spans.back().span;
    EXPECT_EQ(attribute(denied, "ratelimit.verdict"), "denied");
    const auto store = receiver.spans_of_kind(opentelemetry::proto::trace::v1::Span::SPAN_KIND_CLIENT);
    ASSERT_EQ(store.size(), 21u);
    EXPECT_EQ(store.back().span.parent_span_id(), denied.span_id());
    EXPECT_EQ(attribute(store.back().span, "ratelimit.remaining"), "0");
    EXPECT_EQ(attribute(denied, "http.response.status_code"), "429");
    EXPECT_EQ(denied.status().code(), opentelemetry::proto::trace::v1::Status::STATUS_CODE_UNSET)
        << "a denial is the check working, not an error";
    EXPECT_TRUE(denied.parent_span_id().empty()) << "a malformed traceparent starts a new trace";
    EXPECT_EQ(denied.trace_id().size(), 16u);
}

// Roots sampled at 10 % of 10,000 checks: a binomial count, mean 1,000, standard deviation
// sqrt(10,000 * 0.1 * 0.9) = 30; five of them either side.
TEST(TraceExport, TheSamplingRatioIsHonouredOverTenThousandChecks) {
    RedisServer redis;
    OtlpReceiver receiver;
    Ratelimitd server(trace_config, redis.url(), tracing_args(receiver, "0.1"));
    HttpClient client(server.port());
    constexpr int checks = 10'000;
    for (int i = 0; i < checks; ++i) ASSERT_EQ(client.get("/v1/check?policy=wide&tenant=t").status, 200);
    // A last check in a sampled trace of the test's: the queue is first in, first out and its
    // batches go one after another, so once its span arrived every earlier one has.
    ASSERT_EQ(client.get("/v1/check?policy=wide&tenant=t",
                         {{"traceparent", std::string("00-") + trace_id + "-" + parent_id + "-01"}})
                  .status,
              200);
    const auto marker_arrived = [&] {
        const auto spans = receiver.server_spans();
        return !spans.empty() && hex(spans.back().span.trace_id()) == trace_id;
    };
    ASSERT_TRUE(wait_until(marker_arrived, export_bound));
    EXPECT_EQ(sample(client.get("/metrics").body, "ratelimitd_trace_spans_dropped_total"), 0);
    const double sampled = static_cast<double>(receiver.server_spans().size() - 1);
    EXPECT_EQ(receiver.spans().size(), 2 * receiver.server_spans().size()) << "each with its store span";
    EXPECT_NEAR(sampled, 1000.0, 5 * 30.0) << sampled;
}

TEST(TraceExport, AReceiverThatIsDownCostsTheChecksNothingAndEverySpanIsCounted) {
    RedisServer redis;
    OtlpReceiver receiver;
    receiver.http().down();
    Ratelimitd server(trace_config, redis.url(), tracing_args(receiver, "1"));
    HttpClient client(server.port());
    constexpr int checks = 3000;
    int admitted = 0;
    int denied = 0;
    for (int i = 0; i < checks; ++i) {
        const int status = client.get("/v1/check?policy=tb&tenant=t" + std::to_string(i % 100)).status;
        admitted += status == 200 ? 1 : 0;
        denied += status == 429 ? 1 : 0;
    }
    // 100 tenants of 20 each, exactly as without tracing.
    EXPECT_EQ(admitted, 2000);
    EXPECT_EQ(denied, 1000);
    // Every span is queued, dropped at a full queue, or given up after its batch's tries; none
    // reaches a collector that is not there.
    const auto accounted = [&] {
        const auto text = client.get("/metrics").body;
        return sample(text, "ratelimitd_trace_spans_dropped_total") + sample(text, "ratelimitd_trace_spans_failed_total") +
               sample(text, "ratelimitd_trace_queue_spans");
    };
    // Two spans a check: its server span and its store call's.
    ASSERT_TRUE(wait_until([&] { return accounted() == 2 * checks; }, export_bound)) << accounted();
    const auto text = client.get("/metrics").body;
    EXPECT_EQ(sample(text, "ratelimitd_trace_spans_exported_total"), 0);
    EXPECT_EQ(receiver.spans().size(), 0u);
}

// nginx's auth_request forwards the client's traceparent (the shipped config's one line):
// /v1/auth's span is a child of the client's span.
TEST(TraceExport, NginxAuthRequestForwardsTheTraceparent) {
    OtlpReceiver receiver;
    const std::string auth_config = R"(
policies:
  per-ip: { algorithm: fixed_window, limit: 10, window: 1h }
identity:
  - { client_ip: true }
trusted_proxies: ["127.0.0.2/32"]
routes:
  - { path: "/api/*", policy: per-ip }
)";
    auto args = tracing_args(receiver, "0");
    args.insert(args.end(), {"--watch-config", "off"});
    Ratelimitd ratelimitd(auth_config, "", args);
    Nginx nginx({ratelimitd.port(), "closed", "127.0.0.2"});
    HttpClient client(nginx.port());
    ASSERT_EQ(client.get("/api/x", {{"traceparent", std::string("00-") + trace_id + "-" + parent_id + "-01"}}).status, 200);
    ASSERT_EQ(nginx.upstream_requests(), 1);
    ASSERT_TRUE(wait_until([&] { return !receiver.spans().empty(); }, export_bound));
    const auto spans = receiver.server_spans();
    ASSERT_EQ(spans.size(), 1u);
    const auto& span = spans[0].span;
    EXPECT_EQ(hex(span.trace_id()), trace_id);
    EXPECT_EQ(hex(span.parent_span_id()), parent_id);
    EXPECT_EQ(attribute(span, "http.route"), "/v1/auth");
    EXPECT_EQ(attribute(span, "http.request.method"), "HEAD");
    EXPECT_EQ(attribute(span, "ratelimit.policy"), "per-ip");
    const auto store = receiver.spans_of_kind(opentelemetry::proto::trace::v1::Span::SPAN_KIND_INTERNAL);
    ASSERT_EQ(store.size(), 1u) << "the embedded store's step: an internal span";
    EXPECT_EQ(store[0].span.parent_span_id(), span.span_id());
    EXPECT_EQ(store[0].span.name(), "ratelimit.store embedded");
    EXPECT_EQ(attribute(store[0].span, "db.system.name"), "");
    EXPECT_EQ(attribute(store[0].span, "ratelimit.remaining"), "9");
    EXPECT_EQ(attribute(store[0].span, "ratelimit.store"), "embedded");
}

// Envoy's tracer sends W3C headers as gRPC metadata: ShouldRateLimit's span follows them.
TEST(TraceExport, ShouldRateLimitFollowsTheTraceparentMetadata) {
    RedisServer redis;
    OtlpReceiver receiver;
    const auto rules = scratch_dir() + "/trace-rules-" + std::to_string(free_port()) + ".yaml";
    std::ofstream(rules) << "domain: edge\ndescriptors:\n  - key: tenant\n    rate_limit: {unit: hour, requests_per_unit: 5}\n";
    auto args = tracing_args(receiver, "0");
    args.insert(args.end(), {"--grpc-listen", "127.0.0.1:0"});
    Ratelimitd server("envoy_config: " + rules + "\n", redis.url(), args);
    const auto port = grpc_port_from_log(server.process().wait_for_log("grpc listening on", process_start_bound));
    auto stub = envoy::service::ratelimit::v3::RateLimitService::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.AddMetadata("traceparent", std::string("00-") + trace_id + "-" + parent_id + "-01");
    RlsResponse response;
    ASSERT_TRUE(stub->ShouldRateLimit(&context, rls_request("edge", {Descriptor{{{"tenant", "acme"}}, {}}}), &response).ok());
    ASSERT_EQ(response.overall_code(), RlsResponse::OK);
    ASSERT_TRUE(wait_until([&] { return !receiver.spans().empty(); }, export_bound));
    const auto spans = receiver.server_spans();
    ASSERT_EQ(spans.size(), 1u);
    const auto& span = spans[0].span;
    EXPECT_EQ(hex(span.trace_id()), trace_id);
    EXPECT_EQ(hex(span.parent_span_id()), parent_id);
    EXPECT_EQ(span.name(), "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit");
    const auto store = receiver.spans_of_kind(opentelemetry::proto::trace::v1::Span::SPAN_KIND_CLIENT);
    ASSERT_EQ(store.size(), 1u);
    EXPECT_EQ(store[0].span.parent_span_id(), span.span_id());
    EXPECT_EQ(attribute(store[0].span, "ratelimit.domain"), "edge");
    EXPECT_EQ(attribute(store[0].span, "ratelimit.policy"), "") << "an Envoy call names its domain";
    EXPECT_EQ(attribute(store[0].span, "ratelimit.limit"), "5");
    EXPECT_EQ(attribute(store[0].span, "ratelimit.remaining"), "4");
    EXPECT_EQ(attribute(store[0].span, "ratelimit.store"), "redis");
    EXPECT_EQ(attribute(span, "rpc.system"), "grpc");
    EXPECT_EQ(attribute(span, "rpc.method"), "ShouldRateLimit");
    EXPECT_EQ(attribute(span, "rpc.grpc.status_code"), "0");
    EXPECT_EQ(attribute(span, "ratelimit.domain"), "edge");
    EXPECT_EQ(attribute(span, "ratelimit.verdict"), "allowed");
}

}  // namespace
}  // namespace ratelimitd::test::trace_export_test
