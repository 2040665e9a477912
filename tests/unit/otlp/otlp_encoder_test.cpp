// encode_export_request: every field where trace.proto numbers it, read back through the wire.
#include "ratelimitd/otlp/otlp_encoder.hpp"

#include <gtest/gtest.h>

namespace {

using namespace ratelimitd;

TEST(OtlpEncoder, SpansAndResourceSurviveTheWire) {
    trace::Span span;
    span.trace_id[0] = 0x4b;
    span.trace_id[15] = 0x36;
    span.span_id[7] = 0x01;
    span.parent_span_id[0] = 0xaa;
    span.tracestate = "rojo=1";
    span.name = "GET /v1/check";
    span.kind = trace::SpanKind::server;
    span.start_unix_nano = 1'700'000'000'000'000'000ULL;
    span.end_unix_nano = 1'700'000'000'000'250'000ULL;
    span.status = trace::StatusCode::error;
    span.add("ratelimit.policy", "api");
    span.add("ratelimit.limit", std::int64_t{20});
    span.add("ratelimit.degraded", true);
    trace::Span root;
    root.trace_id[0] = 1;
    root.span_id[0] = 2;
    const otlp::ServiceResource resource{"rl", "edge", "", "0.1.0"};
    const std::vector<trace::Span> spans{span, root};

    opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest decoded;
    ASSERT_TRUE(decoded.ParseFromString(otlp::encode_export_request(resource, spans).SerializeAsString()));
    ASSERT_EQ(decoded.resource_spans_size(), 1);
    const auto& rs = decoded.resource_spans(0);
    ASSERT_EQ(rs.resource().attributes_size(), 3) << "an empty service.instance.id is not sent";
    EXPECT_EQ(rs.resource().attributes(0).key(), "service.name");
    EXPECT_EQ(rs.resource().attributes(0).value().string_value(), "rl");
    EXPECT_EQ(rs.resource().attributes(2).key(), "service.version");
    ASSERT_EQ(rs.scope_spans(0).spans_size(), 2);
    EXPECT_EQ(rs.scope_spans(0).scope().name(), "ratelimitd");
    const auto& s = rs.scope_spans(0).spans(0);
    EXPECT_EQ(s.trace_id().size(), 16u);
    EXPECT_EQ(static_cast<unsigned char>(s.trace_id()[0]), 0x4b);
    EXPECT_EQ(static_cast<unsigned char>(s.span_id()[7]), 0x01);
    EXPECT_EQ(static_cast<unsigned char>(s.parent_span_id()[0]), 0xaa);
    EXPECT_EQ(s.trace_state(), "rojo=1");
    EXPECT_EQ(s.flags(), 1u);
    EXPECT_EQ(s.name(), "GET /v1/check");
    EXPECT_EQ(s.kind(), opentelemetry::proto::trace::v1::Span::SPAN_KIND_SERVER);
    EXPECT_EQ(s.end_time_unix_nano() - s.start_time_unix_nano(), 250'000u);
    EXPECT_EQ(s.status().code(), opentelemetry::proto::trace::v1::Status::STATUS_CODE_ERROR);
    ASSERT_EQ(s.attributes_size(), 3);
    EXPECT_EQ(s.attributes(0).value().string_value(), "api");
    EXPECT_EQ(s.attributes(1).value().int_value(), 20);
    EXPECT_TRUE(s.attributes(2).value().bool_value());
    EXPECT_TRUE(rs.scope_spans(0).spans(1).parent_span_id().empty()) << "a root has no parent id";
}

}  // namespace
