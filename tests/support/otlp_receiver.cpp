// OtlpReceiver: decoding only; the HTTP side is WebhookReceiver's.
#include "support/otlp_receiver.hpp"

#include "opentelemetry/proto/collector/trace/v1/trace_service.pb.h"

#include <gtest/gtest.h>

namespace ratelimitd::test {

std::vector<ReceivedSpan> OtlpReceiver::spans() const {
    std::vector<ReceivedSpan> out;
    for (const auto& request : http_.requests()) {
        if (request.target != "/v1/traces") continue;
        opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest decoded;
        if (!decoded.ParseFromString(request.body)) {
            ADD_FAILURE() << "an OTLP body that does not decode (" << request.body.size() << " bytes)";
            continue;
        }
        for (const auto& resource_spans : decoded.resource_spans()) {
            std::map<std::string, std::string> resource;
            for (const auto& kv : resource_spans.resource().attributes()) resource[kv.key()] = kv.value().string_value();
            for (const auto& scope : resource_spans.scope_spans()) {
                for (const auto& span : scope.spans()) out.push_back({span, resource});
            }
        }
    }
    return out;
}

std::vector<ReceivedSpan> OtlpReceiver::spans_of_kind(opentelemetry::proto::trace::v1::Span::SpanKind kind) const {
    std::vector<ReceivedSpan> out;
    for (auto& s : spans()) {
        if (s.span.kind() == kind) out.push_back(std::move(s));
    }
    return out;
}

std::vector<std::string> OtlpReceiver::request_lines() const {
    std::vector<std::string> out;
    for (const auto& request : http_.requests()) {
        const auto type = request.headers.find("content-type");
        out.push_back(request.method + " " + request.target + " " +
                      (type == request.headers.end() ? std::string() : type->second));
    }
    return out;
}

std::string attribute(const opentelemetry::proto::trace::v1::Span& span, const std::string& key) {
    for (const auto& kv : span.attributes()) {
        if (kv.key() != key) continue;
        const auto& v = kv.value();
        if (v.has_string_value()) return v.string_value();
        if (v.has_int_value()) return std::to_string(v.int_value());
        if (v.has_bool_value()) return v.bool_value() ? "true" : "false";
        if (v.has_double_value()) return std::to_string(v.double_value());
    }
    return "";
}

std::string hex(const std::string& bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : bytes) {
        out.push_back(digits[b >> 4]);
        out.push_back(digits[b & 0xf]);
    }
    return out;
}

}  // namespace ratelimitd::test
