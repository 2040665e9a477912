// EncodedSpanQueue: a check's spans encoded at submit, all or none; chunks closed at the batch
// size; drops counted in spans; a chunk behind encode_request_head is a whole request, decoded
// here with the classes generated from opentelemetry-proto.
#include "ratelimitd/otlp/encoded_span_queue.hpp"

#include "ratelimitd/otlp/otlp_encoder.hpp"

#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"

#include <gtest/gtest.h>

namespace encoded_span_queue_test {

using ratelimitd::otlp::EncodedSpanQueue;
using ratelimitd::otlp::SpanChunk;
using ratelimitd::trace::Span;

std::vector<Span> policy_spans(std::initializer_list<const char*> names) {
    std::vector<Span> spans;
    for (const char* n : names) {
        Span s;
        s.trace_id[0] = 1;
        s.span_id[0] = 2;
        s.name = n;
        s.add("ratelimit.policy", std::string("roomy"));
        spans.push_back(std::move(s));
    }
    return spans;
}

// The names of a chunk's spans, in order, read from the request it makes.
std::vector<std::string> names_in(const SpanChunk& chunk) {
    std::string request;
    ratelimitd::otlp::encode_request_head({}, chunk.bytes.size(), request);
    request += chunk.bytes;
    opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest decoded;
    EXPECT_TRUE(decoded.ParseFromString(request));
    std::vector<std::string> names;
    for (const auto& span : decoded.resource_spans(0).scope_spans(0).spans()) {
        names.push_back(span.name());
        EXPECT_EQ(span.attributes(0).value().string_value(), "roomy");
    }
    return names;
}

TEST(EncodedSpanQueue, HoldsUpToItsCapacityAndCountsWhatItDrops) {
    EncodedSpanQueue queue(3, 512);
    queue.submit(policy_spans({"a", "b"}));
    queue.submit(policy_spans({"c", "d"}));  // 4 > 3: both dropped, not one of them
    queue.submit_view(policy_spans({"e"}));
    EXPECT_EQ(queue.size(), 3u);
    EXPECT_EQ(queue.dropped(), 2u);
    SpanChunk chunk;
    ASSERT_TRUE(queue.take(chunk));
    EXPECT_EQ(chunk.spans, 3u);
    EXPECT_EQ(names_in(chunk), (std::vector<std::string>{"a", "b", "e"}));
    EXPECT_EQ(queue.size(), 0u);
    EXPECT_FALSE(queue.take(chunk));
    EXPECT_EQ(chunk.spans, 3u) << "a failed take leaves the chunk alone";
}

TEST(EncodedSpanQueue, AChunkClosesAtTheBatchSizeAndNeverSplitsACheck) {
    EncodedSpanQueue queue(100, 3);
    queue.submit(policy_spans({"a", "b"}));
    queue.submit(policy_spans({"c", "d"}));  // the chunk had 2 < 3: it takes both, 4 spans
    queue.submit(policy_spans({"e"}));       // 4 >= 3: a new chunk
    SpanChunk chunk;
    ASSERT_TRUE(queue.take(chunk));
    EXPECT_EQ(names_in(chunk), (std::vector<std::string>{"a", "b", "c", "d"}));
    EXPECT_EQ(chunk.spans, 4u);
    ASSERT_TRUE(queue.take(chunk));
    EXPECT_EQ(names_in(chunk), (std::vector<std::string>{"e"}));
    EXPECT_EQ(chunk.spans, 1u);
    // A later chunk reuses a taken string: its bytes are the new check's only.
    queue.submit(policy_spans({"f"}));
    ASSERT_TRUE(queue.take(chunk));
    EXPECT_EQ(names_in(chunk), (std::vector<std::string>{"f"}));
    EXPECT_EQ(queue.dropped(), 0u);
}

TEST(EncodedSpanQueue, AFullChunkWakesTheExporterOnce) {
    EncodedSpanQueue queue(100, 3);
    int wakes = 0;
    queue.on_full_batch([&wakes] { ++wakes; });
    queue.submit(policy_spans({"a", "b"}));
    EXPECT_EQ(wakes, 0) << "2 of 3: not full";
    queue.submit(policy_spans({"c"}));
    EXPECT_EQ(wakes, 1);
    queue.submit(policy_spans({"d"}));
    EXPECT_EQ(wakes, 1) << "a new chunk, 1 of 3";
    queue.submit(policy_spans({"e", "f", "g", "h"}));  // over the batch: still one wake
    EXPECT_EQ(wakes, 2);
    EncodedSpanQueue small(2, 3);
    small.on_full_batch([&wakes] { ++wakes; });
    small.submit(policy_spans({"a", "b", "c"}));
    EXPECT_EQ(wakes, 2) << "dropped spans fill no chunk";
    EXPECT_EQ(small.dropped(), 3u);
}

}  // namespace encoded_span_queue_test
