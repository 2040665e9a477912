// Where finished spans go: the exporter's bounded queue, or a test's vector.
#pragma once

#include "ratelimitd/trace/span.hpp"

namespace ratelimitd::trace {

/// Called from every server thread at the end of a sampled check: must not block or throw
/// (a full queue drops the spans and counts them).
class SpanSink {
public:
    virtual ~SpanSink() = default;
    /// A check's spans, the server span first, then its children.
    virtual void submit(std::vector<Span>&& spans) noexcept = 0;
};

}  // namespace ratelimitd::trace
