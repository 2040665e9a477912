// How one batch reaches the collector: OTLP/HTTP protobuf (http_transport.cpp) or OTLP/gRPC
// (grpc_transport.cpp). Called from the export thread only.
#pragma once

#include "ratelimitd/otlp/exporter_target.hpp"

#include <chrono>
#include <memory>
#include <string_view>

namespace ratelimitd::otlp {

/// Sends one serialized ExportTraceServiceRequest, given as its head (encode_request_head) and
/// its spans (a queue chunk): sent one after the other as they are, never joined into a copy.
/// True when the collector took it, false on a failure worth retrying (connection refused,
/// timeout, 429, 502, 503, 504, gRPC UNAVAILABLE...); `permanent` set when retrying cannot help
/// (another 4xx, a malformed answer).
class Transport {
public:
    virtual ~Transport() = default;
    virtual bool send(std::string_view head, std::string_view spans, std::chrono::steady_clock::time_point deadline,
                      bool& permanent) = 0;
};

/// The transports (http_transport.cpp, grpc_transport.cpp).
[[nodiscard]] std::unique_ptr<Transport> make_http_transport(const ExporterTarget& target);
[[nodiscard]] std::unique_ptr<Transport> make_grpc_transport(const ExporterTarget& target);

}  // namespace ratelimitd::otlp
