// parse_exporter_target: OTEL_EXPORTER_OTLP_ENDPOINT's forms per protocol, the /v1/traces path,
// default ports, and OTEL_EXPORTER_OTLP_HEADERS.
#include "ratelimitd/otlp/exporter_target.hpp"

#include <gtest/gtest.h>

namespace {

using ratelimitd::otlp::parse_exporter_target;
using ratelimitd::otlp::Protocol;

TEST(ExporterTarget, HttpEndpointsGetTheSignalPath) {
    auto t = parse_exporter_target(Protocol::http_protobuf, "http://collector:4318", "", false);
    ASSERT_TRUE(t.has_value());
    EXPECT_FALSE(t->tls);
    EXPECT_EQ(t->host, "collector");
    EXPECT_EQ(t->port, "4318");
    EXPECT_EQ(t->target, "/v1/traces");
    t = parse_exporter_target(Protocol::http_protobuf, "https://otel.example/base/", "", false);
    ASSERT_TRUE(t.has_value());
    EXPECT_TRUE(t->tls);
    EXPECT_EQ(t->port, "4318");
    EXPECT_EQ(t->target, "/base/v1/traces");
    t = parse_exporter_target(Protocol::http_protobuf, "http://[::1]:9999", "", false);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->host, "::1");
    EXPECT_EQ(t->port, "9999");
}

TEST(ExporterTarget, GrpcTakesABareHostPortWithTlsUnlessInsecure) {
    auto t = parse_exporter_target(Protocol::grpc, "collector:4317", "", false);
    ASSERT_TRUE(t.has_value());
    EXPECT_TRUE(t->tls);
    t = parse_exporter_target(Protocol::grpc, "collector", "", true);
    ASSERT_TRUE(t.has_value());
    EXPECT_FALSE(t->tls);
    EXPECT_EQ(t->port, "4317");
    t = parse_exporter_target(Protocol::grpc, "http://collector:4317", "", false);
    ASSERT_TRUE(t.has_value());
    EXPECT_FALSE(t->tls);
}

TEST(ExporterTarget, MalformedEndpointsAreRefused) {
    EXPECT_FALSE(parse_exporter_target(Protocol::http_protobuf, "collector:4318", "", false).has_value());
    EXPECT_FALSE(parse_exporter_target(Protocol::http_protobuf, "ftp://c", "", false).has_value());
    EXPECT_FALSE(parse_exporter_target(Protocol::http_protobuf, "http://c:99999", "", false).has_value());
    EXPECT_FALSE(parse_exporter_target(Protocol::http_protobuf, "http://:80", "", false).has_value());
    EXPECT_FALSE(parse_exporter_target(Protocol::grpc, "[::1", "", false).has_value());
}

TEST(ExporterTarget, HeadersArePercentDecodedPairs) {
    auto t = parse_exporter_target(Protocol::http_protobuf, "http://c", "api-key=s%3Dcret, x-team = edge ,", false);
    ASSERT_TRUE(t.has_value());
    ASSERT_EQ(t->headers.size(), 2u);
    EXPECT_EQ(t->headers[0].first, "api-key");
    EXPECT_EQ(t->headers[0].second, "s=cret");
    EXPECT_EQ(t->headers[1].first, "x-team");
    EXPECT_EQ(t->headers[1].second, "edge");
    EXPECT_FALSE(parse_exporter_target(Protocol::http_protobuf, "http://c", "novalue", false).has_value());
    EXPECT_FALSE(parse_exporter_target(Protocol::http_protobuf, "http://c", "k=a%0D%0AX-Injected: 1", false).has_value())
        << "a line break would inject a header";
}

}  // namespace
