// Where finished spans go: the exporter's bounded queue, or a test's vector.
#pragma once

#include "ratelimitd/trace/span.hpp"

#include <span>
#include <vector>

namespace ratelimitd::trace {

/// Called from every server thread at the end of a sampled check: must not block or throw
/// (a full queue drops the spans and counts them).
class SpanSink {
public:
    virtual ~SpanSink() = default;
    /// A check's spans, the server span first, then its children.
    virtual void submit(std::vector<Span>&& spans) noexcept = 0;
    /// The same, lent for the call only: a sink that encodes them at once (the exporter's) takes
    /// no copy, and the door keeps its spans' storage for its next check. This default copies
    /// them into submit.
    virtual void submit_view(std::span<const Span> spans) noexcept {
        try {
            submit(std::vector<Span>(spans.begin(), spans.end()));
        } catch (...) {
            // bad_alloc: the spans are lost, never the check.
        }
    }
};

}  // namespace ratelimitd::trace
