// Traces over OTLP/gRPC and the store call's span: the real binary, a real redis-server and a
// small OTLP/gRPC collector (support/otlp_grpc_receiver.hpp, decoding with the stubs of
// opentelemetry-proto). A check's server span and its store call's child arrive in the caller's
// trace with the export headers as metadata; /v1/release has its server span too, the lease
// never in it.
#include "support/http_client.hpp"
#include "support/otlp_grpc_receiver.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>

namespace ratelimitd::test::trace_store_span_test {
namespace {

using opentelemetry::proto::trace::v1::Span;

const char* const config = R"(
prefix: rl
policies:
  tb: { algorithm: token_bucket, limit: 20, window: 24h }
  jobs: { algorithm: concurrency, limit: 3, lease: 10m }
)";

constexpr const char* trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* parent_id = "00f067aa0ba902b7";
const std::string traceparent = std::string("00-") + trace_id + "-" + parent_id + "-01";

// Exports every 1 s (the default schedule delay): spans are awaited, never slept for.
constexpr std::chrono::seconds export_bound{30};

// Parent based at ratio 0: only the test's sampled traceparent is traced.
std::vector<std::string> grpc_tracing_args(const OtlpGrpcReceiver& receiver) {
    return {"--trace-protocol", "grpc", "--trace-endpoint", receiver.endpoint(), "--trace-sampler-arg", "0",
            "--trace-service-namespace", "edge"};
}

// A collector's key is a secret: the environment only (no flag, no file key).
const std::vector<std::string> collector_key_env{"OTEL_EXPORTER_OTLP_HEADERS=x-collector-key=team%20a"};

const ReceivedSpan* of_kind(const std::vector<ReceivedSpan>& spans, Span::SpanKind kind) {
    for (const auto& s : spans) {
        if (s.span.kind() == kind) return &s;
    }
    return nullptr;
}

TEST(TraceStoreSpan, OtlpGrpcCarriesTheCheckSpanAndItsStoreCallWithTheHeadersAsMetadata) {
    RedisServer redis;
    OtlpGrpcReceiver receiver;
    Ratelimitd server(config, redis.url(), grpc_tracing_args(receiver), collector_key_env);
    HttpClient client(server.port());
    ASSERT_EQ(client.get("/v1/check?policy=tb&tenant=t1").status, 200) << "no parent at ratio 0: not traced";
    ASSERT_EQ(client.get("/v1/check?policy=tb&tenant=t1", {{"traceparent", traceparent}}).status, 200);
    ASSERT_TRUE(wait_until([&] { return receiver.spans().size() >= 2; }, export_bound)) << server.process().log();
    const auto spans = receiver.spans();
    ASSERT_EQ(spans.size(), 2u) << "one traced check: its server span and its store call's";
    const ReceivedSpan* check = of_kind(spans, Span::SPAN_KIND_SERVER);
    const ReceivedSpan* store = of_kind(spans, Span::SPAN_KIND_CLIENT);
    ASSERT_NE(check, nullptr);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(hex(check->span.trace_id()), trace_id);
    EXPECT_EQ(hex(check->span.parent_span_id()), parent_id);
    EXPECT_EQ(check->span.name(), "GET /v1/check");
    EXPECT_EQ(hex(store->span.trace_id()), trace_id);
    EXPECT_EQ(store->span.parent_span_id(), check->span.span_id());
    EXPECT_NE(store->span.span_id(), check->span.span_id());
    EXPECT_EQ(store->span.name(), "ratelimit.store redis");
    EXPECT_LE(check->span.start_time_unix_nano(), store->span.start_time_unix_nano());
    EXPECT_LE(store->span.end_time_unix_nano(), check->span.end_time_unix_nano());
    EXPECT_EQ(attribute(store->span, "db.system.name"), "redis");
    EXPECT_EQ(attribute(store->span, "ratelimit.verdict"), "allowed");
    EXPECT_EQ(attribute(store->span, "ratelimit.remaining"), "18");
    EXPECT_EQ(attribute(store->span, "ratelimit.degraded"), "false");
    EXPECT_EQ(check->resource.at("service.namespace"), "edge");
    ASSERT_EQ(receiver.metadata().size(), receiver.calls());
    EXPECT_EQ(receiver.metadata().front().at("x-collector-key"), "team a") << "percent-decoded";
}

TEST(TraceStoreSpan, AReleaseHasAServerSpanAndAStoreSpanWithoutTheLease) {
    RedisServer redis;
    OtlpGrpcReceiver receiver;
    Ratelimitd server(config, redis.url(), grpc_tracing_args(receiver));
    HttpClient client(server.port());
    const nlohmann::json asked = {{"policy", "jobs"}, {"tenant", "t1"}};
    const auto taken = client.post("/v1/check", asked.dump(), {{"Content-Type", "application/json"}});
    ASSERT_EQ(taken.status, 200);
    const std::string lease = nlohmann::json::parse(taken.body).at("lease");
    nlohmann::json release = asked;
    release["lease"] = lease;
    const auto released =
        client.post("/v1/release", release.dump(), {{"Content-Type", "application/json"}, {"traceparent", traceparent}});
    ASSERT_EQ(released.status, 200) << released.body;
    ASSERT_TRUE(nlohmann::json::parse(released.body).at("released").get<bool>());
    ASSERT_TRUE(wait_until([&] { return receiver.spans().size() >= 2; }, export_bound)) << server.process().log();
    const auto spans = receiver.spans();
    ASSERT_EQ(spans.size(), 2u) << "only the release was traced";
    const ReceivedSpan* door = of_kind(spans, Span::SPAN_KIND_SERVER);
    const ReceivedSpan* store = of_kind(spans, Span::SPAN_KIND_CLIENT);
    ASSERT_NE(door, nullptr);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(door->span.name(), "POST /v1/release");
    EXPECT_EQ(hex(door->span.parent_span_id()), parent_id);
    EXPECT_EQ(attribute(door->span, "http.route"), "/v1/release");
    EXPECT_EQ(attribute(door->span, "http.response.status_code"), "200");
    EXPECT_EQ(attribute(door->span, "ratelimit.policy"), "jobs");
    EXPECT_EQ(attribute(store->span, "ratelimit.remaining"), "3") << "the slot is free again";
    EXPECT_EQ(store->span.parent_span_id(), door->span.span_id());
    for (const auto* s : {door, store}) {
        for (const auto& kv : s->span.attributes()) {
            EXPECT_EQ(kv.value().string_value().find(lease), std::string::npos) << kv.key() << " holds the lease";
            EXPECT_EQ(kv.value().string_value().find("t1"), std::string::npos) << kv.key() << " names the tenant";
        }
    }
}

}  // namespace
}  // namespace ratelimitd::test::trace_store_span_test
