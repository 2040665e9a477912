// Tracer::start: a valid parent is followed (its trace id, its span as parent, its tracestate),
// a malformed one makes a new root, an unsampled parent records nothing; spans' Unix times.
#include "ratelimitd/trace/tracer.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

using namespace ratelimitd::trace;

class KeptSpans : public SpanSink {
public:
    void submit(std::vector<Span>&& spans) noexcept override {
        for (auto& s : spans) kept.push_back(std::move(s));
    }
    std::vector<Span> kept;
};

constexpr const char* sampled_parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr const char* unsampled_parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";

TEST(Tracer, FollowsAValidParent) {
    KeptSpans sink;
    const Tracer tracer(Sampler::parent_based_ratio(0.0), sink);
    const auto check = tracer.start(sampled_parent, "rojo=1, congo=2");
    ASSERT_TRUE(check.has_value()) << "a sampled parent wins over ratio 0";
    EXPECT_EQ(check->trace_id[0], 0x4b);
    EXPECT_EQ(check->parent_span_id[7], 0xb7);
    EXPECT_NE(check->span_id, check->parent_span_id);
    EXPECT_EQ(check->tracestate, "rojo=1,congo=2");
}

TEST(Tracer, AnUnsampledParentRecordsNothing) {
    KeptSpans sink;
    const Tracer tracer(Sampler::parent_based_ratio(1.0), sink);
    EXPECT_FALSE(tracer.start(unsampled_parent, "").has_value());
}

TEST(Tracer, AMalformedParentMakesANewRoot) {
    KeptSpans sink;
    const Tracer tracer(Sampler::parent_based_ratio(1.0), sink);
    const auto check = tracer.start("00-nothex-00f067aa0ba902b7-01", "rojo=1");
    ASSERT_TRUE(check.has_value());
    EXPECT_TRUE(is_zero(check->parent_span_id));
    EXPECT_FALSE(is_zero(check->trace_id));
    EXPECT_EQ(check->tracestate, "") << "a tracestate without a valid parent is dropped";
}

TEST(Tracer, UnixTimesFollowTheSteadyOffset) {
    const auto steady_now = std::chrono::steady_clock::time_point(std::chrono::seconds(100));
    const auto system_now = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
    EXPECT_EQ(unix_nanos_of(steady_now - std::chrono::milliseconds(3), steady_now, system_now),
              1'700'000'000'000'000'000ULL - 3'000'000ULL);
}

TEST(Tracer, AServerSpanAndItsChildShareTheTrace) {
    KeptSpans sink;
    const Tracer tracer(Sampler::parent_based_ratio(1.0), sink);
    const auto check = tracer.start(sampled_parent, "");
    ASSERT_TRUE(check.has_value());
    const auto arrived = std::chrono::steady_clock::now();
    const Span server = Tracer::server_span(*check, "GET /v1/check", arrived);
    EXPECT_EQ(server.kind, SpanKind::server);
    EXPECT_LE(server.start_unix_nano, server.end_unix_nano);
    EXPECT_EQ(server.parent_span_id, check->parent_span_id);
    const Span store = Tracer::child_span(server, "store", SpanKind::client);
    EXPECT_EQ(store.trace_id, server.trace_id);
    EXPECT_EQ(store.parent_span_id, server.span_id);
    tracer.submit({server, store});
    ASSERT_EQ(sink.kept.size(), 2u);
    EXPECT_EQ(sink.kept[1].name, "store");
}

}  // namespace
