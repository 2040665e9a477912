// new_trace_id / new_span_id: never zero, never repeated in a run of thousands.
#include "ratelimitd/trace/id_generator.hpp"

#include <gtest/gtest.h>

#include <set>

namespace {

using ratelimitd::trace::new_span_id;
using ratelimitd::trace::new_trace_id;

TEST(IdGenerator, IdsAreNonZeroAndDistinct) {
    std::set<ratelimitd::trace::TraceId> traces;
    std::set<ratelimitd::trace::SpanId> spans;
    for (int i = 0; i < 5000; ++i) {
        const auto trace = new_trace_id();
        const auto span = new_span_id();
        EXPECT_FALSE(ratelimitd::trace::is_zero(trace));
        EXPECT_FALSE(ratelimitd::trace::is_zero(span));
        traces.insert(trace);
        spans.insert(span);
    }
    EXPECT_EQ(traces.size(), 5000u);
    EXPECT_EQ(spans.size(), 5000u);
}

}  // namespace
