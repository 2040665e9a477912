// A small OTLP/HTTP collector for trace tests: POST /v1/traces bodies taken on a free loopback port
// (by the WebhookReceiver's HTTP server) and decoded with the stubs of proto/opentelemetry.
#pragma once

#include "support/webhook_receiver.hpp"

#include "opentelemetry/proto/trace/v1/trace.pb.h"

#include <map>
#include <string>
#include <vector>

namespace ratelimitd::test {

/// A received span with the resource it came with.
struct ReceivedSpan {
    opentelemetry::proto::trace::v1::Span span;
    std::map<std::string, std::string> resource;  ///< string attributes of its resource
};

class OtlpReceiver {
public:
    /// "http://127.0.0.1:<port>": OTEL_EXPORTER_OTLP_ENDPOINT's form (the exporter adds /v1/traces).
    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(http_.port()); }
    WebhookReceiver& http() { return http_; }

    /// Every span of every POST /v1/traces so far, in arrival order. A body that does not decode
    /// fails the running test.
    std::vector<ReceivedSpan> spans() const;
    /// Those of spans() of one kind: a door's server spans, or the store calls' children
    /// (client for Redis, internal for the embedded store).
    std::vector<ReceivedSpan> spans_of_kind(opentelemetry::proto::trace::v1::Span::SpanKind kind) const;
    std::vector<ReceivedSpan> server_spans() const {
        return spans_of_kind(opentelemetry::proto::trace::v1::Span::SPAN_KIND_SERVER);
    }
    /// The targets and content types of the requests so far ("POST /v1/traces application/x-protobuf").
    std::vector<std::string> request_lines() const;

private:
    WebhookReceiver http_;
};

/// The attribute `key` of `span` as text (strings as they are, numbers and booleans printed);
/// "" when absent.
std::string attribute(const opentelemetry::proto::trace::v1::Span& span, const std::string& key);
/// Bytes as lower-case hex (trace and span ids).
std::string hex(const std::string& bytes);

}  // namespace ratelimitd::test
