// normalize_path: decode, resolve dot-segments, merge slashes (nginx's view of a URI).
#include "ratelimitd/policy/path.hpp"

#include <vector>

namespace ratelimitd::policy {
namespace {

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) noexcept {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != prefix[i]) return false;
    }
    return true;
}

}  // namespace

std::string normalize_path(std::string_view uri) {
    for (std::string_view scheme : {"http://", "https://"}) {
        if (starts_with_ci(uri, scheme)) {
            const auto slash = uri.find('/', scheme.size());
            uri = slash == std::string_view::npos ? std::string_view("/") : uri.substr(slash);
            break;
        }
    }
    uri = uri.substr(0, uri.find_first_of("?#"));

    std::string decoded;
    decoded.reserve(uri.size() + 1);
    if (!uri.starts_with('/')) decoded += '/';
    for (std::size_t i = 0; i < uri.size(); ++i) {
        const int hi = uri[i] == '%' && i + 2 < uri.size() ? hex_value(uri[i + 1]) : -1;
        const int lo = hi >= 0 ? hex_value(uri[i + 2]) : -1;
        if (lo >= 0) {
            decoded += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else {
            decoded += uri[i];
        }
    }

    std::vector<std::string_view> segments;
    const std::string_view path = decoded;
    bool trailing = false;
    for (std::size_t pos = 0;;) {
        const auto slash = path.find('/', pos);
        const std::string_view seg =
            path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
        // A path ending in "/", "/." or "/.." names a directory: keep its trailing slash.
        trailing = seg.empty() || seg == "." || seg == "..";
        if (seg == "..") {
            if (!segments.empty()) segments.pop_back();
        } else if (!seg.empty() && seg != ".") {
            segments.push_back(seg);
        }
        if (slash == std::string_view::npos) break;
        pos = slash + 1;
    }
    std::string out;
    out.reserve(decoded.size());
    for (const auto seg : segments) {
        out += '/';
        out += seg;
    }
    if (out.empty() || trailing) out += '/';
    return out;
}

}  // namespace ratelimitd::policy
