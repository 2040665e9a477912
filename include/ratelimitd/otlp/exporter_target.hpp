// Where spans are exported: the OTLP endpoint URL and headers as OTEL_EXPORTER_OTLP_ENDPOINT and
// OTEL_EXPORTER_OTLP_HEADERS spell them, parsed once at start. No I/O.
#pragma once

#include "ratelimitd/core/error.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ratelimitd::otlp {

enum class Protocol { http_protobuf, grpc };

struct ExporterTarget {
    bool tls = false;   ///< https:// (OTLP/HTTP) or a gRPC endpoint that is not insecure
    std::string host;
    std::string port;
    /// OTLP/HTTP: the request target, the endpoint's path with "/v1/traces" appended (the
    /// OTLP exporter spec: the signal path is added to OTEL_EXPORTER_OTLP_ENDPOINT).
    std::string target;
    std::vector<std::pair<std::string, std::string>> headers;
};

/// `endpoint`: http[s]://host[:port][/path]; for gRPC a bare host:port is read as well, with TLS
/// unless `insecure` (OTEL_EXPORTER_OTLP_INSECURE) or the scheme is http. Default ports: 4318
/// (HTTP) and 4317 (gRPC). `headers`: "k1=v1,k2=v2", values percent-decoded (W3C Baggage
/// format, as the OTLP exporter spec says). A problem names what is wrong.
[[nodiscard]] result<ExporterTarget> parse_exporter_target(Protocol protocol, std::string_view endpoint,
                                                           std::string_view headers, bool insecure);

}  // namespace ratelimitd::otlp
