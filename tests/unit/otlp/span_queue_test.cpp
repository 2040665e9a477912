// SpanQueue: bounded, a call's spans all or none, drops counted, oldest taken first.
#include "ratelimitd/otlp/span_queue.hpp"

#include <gtest/gtest.h>

namespace {

using ratelimitd::otlp::SpanQueue;
using ratelimitd::trace::Span;

std::vector<Span> named(std::initializer_list<const char*> names) {
    std::vector<Span> spans;
    for (const char* n : names) {
        Span s;
        s.name = n;
        spans.push_back(std::move(s));
    }
    return spans;
}

TEST(SpanQueue, HoldsUpToItsCapacityAndCountsWhatItDrops) {
    SpanQueue queue(3);
    queue.submit(named({"a", "b"}));
    queue.submit(named({"c", "d"}));  // 4 > 3: both dropped, not one of them
    queue.submit(named({"e"}));
    EXPECT_EQ(queue.size(), 3u);
    EXPECT_EQ(queue.dropped(), 2u);
    const auto first = queue.take(2);
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[0].name, "a");
    EXPECT_EQ(first[1].name, "b");
    const auto rest = queue.take(10);
    ASSERT_EQ(rest.size(), 1u);
    EXPECT_EQ(rest[0].name, "e");
    EXPECT_EQ(queue.size(), 0u);
    EXPECT_TRUE(queue.take(10).empty());
}

}  // namespace
