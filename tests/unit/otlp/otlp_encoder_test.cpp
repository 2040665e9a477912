// encode_export_request writes protobuf wire bytes by hand: they are decoded here with the
// classes generated from opentelemetry-proto (in the test only) and compared field by field, and
// a message built with those classes must serialize to the very same bytes.
#include "ratelimitd/otlp/otlp_encoder.hpp"

#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"

#include <gtest/gtest.h>

namespace {

using namespace ratelimitd;
namespace otel = opentelemetry::proto;

trace::Span full_span() {
    trace::Span span;
    span.trace_id[0] = 0x4b;
    span.trace_id[15] = 0x36;
    span.span_id[7] = 0x01;
    span.parent_span_id[0] = 0xaa;
    span.tracestate = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";
    span.name = "POST /v1/check";
    span.kind = trace::SpanKind::server;
    span.start_unix_nano = 1'700'000'000'000'000'000ULL;
    span.end_unix_nano = 1'700'000'000'000'250'000ULL;
    span.status = trace::StatusCode::error;
    span.status_message = "store unavailable";
    span.add("ratelimit.policy", std::string(200, 'p'));  // a length of two varint bytes
    span.add("ratelimit.verdict", "denied");
    span.add("ratelimit.limit", std::int64_t{20});
    span.add("ratelimit.remaining", std::int64_t{-1});  // ten varint bytes
    span.add("ratelimit.degraded", true);
    span.add("ratelimit.cache_hit", false);
    span.attributes.push_back({"ratio", 0.25});
    return span;
}

otel::collector::trace::v1::ExportTraceServiceRequest decode(const std::string& bytes) {
    otel::collector::trace::v1::ExportTraceServiceRequest decoded;
    EXPECT_TRUE(decoded.ParseFromString(bytes));
    return decoded;
}

TEST(OtlpEncoder, EveryFieldDecodesWithTheGeneratedClasses) {
    trace::Span root;
    root.trace_id[0] = 1;
    root.span_id[0] = 2;
    root.name = "GET /v1/check";
    const std::vector<trace::Span> spans{full_span(), root};
    std::string bytes;
    otlp::encode_export_request({"rl", "edge", "", "0.1.0"}, spans, bytes);
    const auto decoded = decode(bytes);
    ASSERT_EQ(decoded.resource_spans_size(), 1);
    const auto& rs = decoded.resource_spans(0);
    ASSERT_EQ(rs.resource().attributes_size(), 3) << "an empty service.instance.id is not sent";
    EXPECT_EQ(rs.resource().attributes(0).key(), "service.name");
    EXPECT_EQ(rs.resource().attributes(0).value().string_value(), "rl");
    EXPECT_EQ(rs.resource().attributes(1).key(), "service.namespace");
    EXPECT_EQ(rs.resource().attributes(1).value().string_value(), "edge");
    EXPECT_EQ(rs.resource().attributes(2).key(), "service.version");
    EXPECT_EQ(rs.resource().attributes(2).value().string_value(), "0.1.0");
    ASSERT_EQ(rs.scope_spans_size(), 1);
    EXPECT_EQ(rs.scope_spans(0).scope().name(), "ratelimitd");
    EXPECT_EQ(rs.scope_spans(0).scope().version(), "0.1.0");
    ASSERT_EQ(rs.scope_spans(0).spans_size(), 2);
    const auto& s = rs.scope_spans(0).spans(0);
    EXPECT_EQ(s.trace_id(), std::string("\x4b\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x36", 16));
    EXPECT_EQ(s.span_id(), std::string("\0\0\0\0\0\0\0\x01", 8));
    EXPECT_EQ(s.parent_span_id(), std::string("\xaa\0\0\0\0\0\0\0", 8));
    EXPECT_EQ(s.trace_state(), "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    EXPECT_EQ(s.flags(), 1u);
    EXPECT_EQ(s.name(), "POST /v1/check");
    EXPECT_EQ(s.kind(), otel::trace::v1::Span::SPAN_KIND_SERVER);
    EXPECT_EQ(s.start_time_unix_nano(), 1'700'000'000'000'000'000ULL);
    EXPECT_EQ(s.end_time_unix_nano(), 1'700'000'000'000'250'000ULL);
    EXPECT_EQ(s.status().code(), otel::trace::v1::Status::STATUS_CODE_ERROR);
    EXPECT_EQ(s.status().message(), "store unavailable");
    ASSERT_EQ(s.attributes_size(), 7);
    EXPECT_EQ(s.attributes(0).key(), "ratelimit.policy");
    EXPECT_EQ(s.attributes(0).value().string_value(), std::string(200, 'p'));
    EXPECT_EQ(s.attributes(1).value().string_value(), "denied");
    EXPECT_EQ(s.attributes(2).value().int_value(), 20);
    EXPECT_EQ(s.attributes(3).value().int_value(), -1);
    EXPECT_TRUE(s.attributes(4).value().has_bool_value());
    EXPECT_TRUE(s.attributes(4).value().bool_value());
    EXPECT_TRUE(s.attributes(5).value().has_bool_value());
    EXPECT_FALSE(s.attributes(5).value().bool_value());
    EXPECT_EQ(s.attributes(6).value().double_value(), 0.25);
    const auto& r = rs.scope_spans(0).spans(1);
    EXPECT_TRUE(r.parent_span_id().empty()) << "a root has no parent id";
    EXPECT_TRUE(r.trace_state().empty());
    EXPECT_FALSE(r.has_status()) << "an unset status is not sent";
    EXPECT_EQ(r.attributes_size(), 0);
}

TEST(OtlpEncoder, TheBytesAreTheGeneratedClassesOwnSerialization) {
    const std::vector<trace::Span> spans{full_span(), full_span()};
    std::string bytes;
    otlp::encode_export_request({"rl", "edge", "pod-1", "0.1.0"}, spans, bytes);
    // Field order and minimal varints make protobuf's serialization of the decoded message
    // canonical: equal bytes prove no field is written in a form the schema does not produce.
    const auto decoded = decode(bytes);
    EXPECT_EQ(decoded.SerializeAsString(), bytes);
    EXPECT_EQ(decoded.resource_spans(0).resource().attributes(2).value().string_value(), "pod-1");
}

TEST(OtlpEncoder, KeysAndValuesOfEveryLengthUpToPastTheInlineCopiesComeBackWhole) {
    // WireWriter copies up to 64 bytes inline, as two overlapping stores of 4, 8, 16 or 32
    // bytes, and longer ones with memcpy: every length across each boundary, no two bytes alike
    // in a row, so a store at a wrong offset shows.
    std::vector<std::string> texts;
    for (std::size_t n = 0; n <= 130; ++n) {
        std::string text(n, ' ');
        for (std::size_t i = 0; i < n; ++i) text[i] = static_cast<char>('a' + (n + i) % 26);
        texts.push_back(text);
    }
    trace::Span span;
    for (const auto& text : texts) span.add(text, std::string(text));
    std::string bytes;
    otlp::encode_export_request({}, std::vector<trace::Span>{span}, bytes);
    const auto decoded = decode(bytes).resource_spans(0).scope_spans(0).spans(0);
    ASSERT_EQ(static_cast<std::size_t>(decoded.attributes_size()), texts.size());
    for (std::size_t n = 0; n < texts.size(); ++n) {
        const auto& attribute = decoded.attributes(static_cast<int>(n));
        EXPECT_EQ(attribute.key(), texts[n]) << n;
        EXPECT_EQ(attribute.value().string_value(), texts[n]) << n;
    }
}

TEST(OtlpEncoder, TheBufferIsReusedAndHoldsOnlyTheLastBatch) {
    const std::vector<trace::Span> two{full_span(), full_span()};
    const std::vector<trace::Span> one{full_span()};
    std::string bytes;
    otlp::encode_export_request({}, two, bytes);
    otlp::encode_export_request({}, one, bytes);
    EXPECT_EQ(decode(bytes).resource_spans(0).scope_spans(0).spans_size(), 1);
}

}  // namespace
