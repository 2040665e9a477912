// parse_traceparent / format_traceparent: the W3C examples, every malformation a new root (nullopt),
// and a round trip.
#include "ratelimitd/trace/traceparent.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using ratelimitd::trace::format_traceparent;
using ratelimitd::trace::parse_traceparent;

// The example of W3C Trace Context §3.2.2.
constexpr const char* spec_example = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(Traceparent, ReadsTheSpecExample) {
    const auto parent = parse_traceparent(spec_example);
    ASSERT_TRUE(parent.has_value());
    EXPECT_EQ(parent->trace_id[0], 0x4b);
    EXPECT_EQ(parent->trace_id[15], 0x36);
    EXPECT_EQ(parent->span_id[0], 0x00);
    EXPECT_EQ(parent->span_id[1], 0xf0);
    EXPECT_EQ(parent->span_id[7], 0xb7);
    EXPECT_EQ(parent->flags, 0x01);
    EXPECT_TRUE(parent->sampled());
}

TEST(Traceparent, AnUnsampledParentIsStillAParent) {
    const auto parent = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
    ASSERT_TRUE(parent.has_value());
    EXPECT_FALSE(parent->sampled());
}

TEST(Traceparent, MalformedHeadersAreIgnored) {
    const std::string cases[] = {
        "",
        "garbage",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",      // short
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",    // version 00 with a tail
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",     // upper case
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",     // not hex
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",     // zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",     // zero parent id
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",     // version ff
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",     // separator
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",     // flags not hex
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",    // later version, no '-'
    };
    for (const auto& header : cases) EXPECT_FALSE(parse_traceparent(header).has_value()) << header;
}

TEST(Traceparent, ALaterVersionIsReadForItsFirstFourFields) {
    const auto parent = parse_traceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds");
    ASSERT_TRUE(parent.has_value());
    EXPECT_EQ(parent->trace_id[0], 0x4b);
    EXPECT_TRUE(parent->sampled());
    EXPECT_TRUE(parse_traceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").has_value());
}

TEST(Traceparent, FormatsVersion00AndRoundTrips) {
    const auto parent = parse_traceparent(spec_example);
    ASSERT_TRUE(parent.has_value());
    EXPECT_EQ(format_traceparent(parent->trace_id, parent->span_id, true), spec_example);
    EXPECT_EQ(format_traceparent(parent->trace_id, parent->span_id, false),
              "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
}

}  // namespace
