// parse_exporter_target: scheme, host (IPv6 in brackets), port, path; then the headers list.
#include "ratelimitd/otlp/exporter_target.hpp"

#include "ratelimitd/core/percent.hpp"

#include <algorithm>
#include <string>

namespace ratelimitd::otlp {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool valid_port(std::string_view port) {
    if (port.empty() || port.size() > 5) return false;
    if (!std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
    const int n = std::stoi(std::string(port));
    return n > 0 && n <= 65535;
}

// host[:port] or [v6][:port] into the target; false when it is malformed.
bool read_authority(std::string_view authority, std::string_view default_port, ExporterTarget& out) {
    std::string_view host = authority;
    std::string_view port = default_port;
    if (authority.starts_with('[')) {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) return false;
        host = authority.substr(1, close - 1);
        const auto rest = authority.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return false;
            port = rest.substr(1);
        }
    } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    if (host.empty() || !valid_port(port)) return false;
    out.host = std::string(host);
    out.port = std::string(port);
    return true;
}

result<std::vector<std::pair<std::string, std::string>>> parse_headers(std::string_view text) {
    std::vector<std::pair<std::string, std::string>> headers;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const auto item = trim(text.substr(0, comma));
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        if (item.empty()) continue;
        const auto eq = item.find('=');
        const auto key = trim(item.substr(0, eq));
        if (eq == std::string_view::npos || key.empty()) {
            return invalid_request("OTEL_EXPORTER_OTLP_HEADERS: an item is not key=value");
        }
        auto value = percent_decode(trim(item.substr(eq + 1)));
        if (!value) return invalid_request("OTEL_EXPORTER_OTLP_HEADERS: a value is not percent-encoded");
        // A header value with a line break would inject a header of the caller's choosing.
        if (value->find_first_of("\r\n") != std::string::npos || key.find_first_of("\r\n: ") != std::string_view::npos) {
            return invalid_request("OTEL_EXPORTER_OTLP_HEADERS: a key or value holds a line break");
        }
        headers.emplace_back(std::string(key), std::move(*value));
    }
    return headers;
}

}  // namespace

result<ExporterTarget> parse_exporter_target(Protocol protocol, std::string_view endpoint, std::string_view headers,
                                             bool insecure) {
    ExporterTarget out;
    std::string_view rest = trim(endpoint);
    if (rest.starts_with("https://")) {
        out.tls = true;
        rest.remove_prefix(8);
    } else if (rest.starts_with("http://")) {
        rest.remove_prefix(7);
    } else if (protocol == Protocol::http_protobuf || rest.find("://") != std::string_view::npos) {
        return invalid_request("OTLP endpoint: not an http:// or https:// URL");
    } else {
        out.tls = !insecure;  // gRPC's bare host:port
    }
    const auto slash = rest.find('/');
    const auto authority = rest.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    if (!read_authority(authority, protocol == Protocol::grpc ? "4317" : "4318", out)) {
        return invalid_request("OTLP endpoint: the host or port is malformed");
    }
    while (path.ends_with('/')) path.remove_suffix(1);
    out.target = std::string(path) + "/v1/traces";
    auto parsed = parse_headers(headers);
    if (!parsed) return parsed.error();
    out.headers = std::move(*parsed);
    return out;
}

}  // namespace ratelimitd::otlp
