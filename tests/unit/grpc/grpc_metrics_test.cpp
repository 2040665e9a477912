// GrpcMetrics: counts by method and code, answers by overall code, the latency histogram.
#include "ratelimitd/grpc/grpc_metrics.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::rls {
namespace {

using namespace std::chrono_literals;

bool has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST(GrpcMetrics, CountsCallsByMethodAndCode) {
    GrpcMetrics m;
    m.count_call(GrpcMethod::should_rate_limit, 0, 300us);
    m.count_call(GrpcMethod::should_rate_limit, 3, 2ms);
    m.count_call(GrpcMethod::health_check, 0, 1s);
    m.count_call(GrpcMethod::should_rate_limit, 99, 1ms);  // out of range: UNKNOWN
    const auto text = m.render();
    EXPECT_TRUE(has(text, "ratelimitd_grpc_requests_total{method=\"ShouldRateLimit\",code=\"OK\"} 1"));
    EXPECT_TRUE(has(text, "ratelimitd_grpc_requests_total{method=\"ShouldRateLimit\",code=\"INVALID_ARGUMENT\"} 1"));
    EXPECT_TRUE(has(text, "ratelimitd_grpc_requests_total{method=\"ShouldRateLimit\",code=\"UNKNOWN\"} 1"));
    EXPECT_TRUE(has(text, "ratelimitd_grpc_requests_total{method=\"Check\",code=\"OK\"} 1"));
    EXPECT_EQ(text.find("code=\"NOT_FOUND\""), std::string::npos);  // never happened: not rendered
}

TEST(GrpcMetrics, HistogramIsCumulative) {
    GrpcMetrics m;
    m.count_call(GrpcMethod::should_rate_limit, 0, 300us);
    m.count_call(GrpcMethod::should_rate_limit, 0, 2ms);
    m.count_call(GrpcMethod::should_rate_limit, 0, 1s);
    const auto text = m.render();
    EXPECT_TRUE(has(text, "ratelimitd_grpc_request_duration_seconds_bucket{le=\"0.00025\"} 0"));
    EXPECT_TRUE(has(text, "ratelimitd_grpc_request_duration_seconds_bucket{le=\"0.0005\"} 1"));
    EXPECT_TRUE(has(text, "ratelimitd_grpc_request_duration_seconds_bucket{le=\"0.0025\"} 2"));
    EXPECT_TRUE(has(text, "ratelimitd_grpc_request_duration_seconds_bucket{le=\"0.5\"} 2"));
    EXPECT_TRUE(has(text, "ratelimitd_grpc_request_duration_seconds_bucket{le=\"+Inf\"} 3"));
    EXPECT_TRUE(has(text, "ratelimitd_grpc_request_duration_seconds_count 3"));
}

TEST(GrpcMetrics, CountsAnswers) {
    GrpcMetrics m;
    m.count_answer(RlsAnswer::ok);
    m.count_answer(RlsAnswer::over_limit);
    m.count_answer(RlsAnswer::over_limit);
    const auto text = m.render();
    EXPECT_TRUE(has(text, "ratelimitd_rls_answers_total{code=\"OK\"} 1"));
    EXPECT_TRUE(has(text, "ratelimitd_rls_answers_total{code=\"OVER_LIMIT\"} 2"));
    EXPECT_TRUE(has(text, "ratelimitd_rls_answers_total{code=\"error\"} 0"));
}

}  // namespace
}  // namespace ratelimitd::rls
