// normalize_path: one canonical spelling of every path a backend would route the same way.
#include "ratelimitd/policy/path.hpp"

#include "ratelimitd/core/byte_table.hpp"
#include "ratelimitd/core/hex.hpp"
#include "ratelimitd/core/percent.hpp"

#include <array>
#include <vector>

namespace ratelimitd::policy {
namespace {

constexpr bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// RFC 3986 pchar without ';' (which never survives: it starts a parameter) and without
/// pct-encoded: the bytes written as they are. Every other byte is written %XX.
constexpr bool is_literal(char c) noexcept {
    if (is_alpha(c) || is_digit(c)) return true;
    switch (c) {
    case '-': case '.': case '_': case '~':                                // unreserved
    case '!': case '$': case '&': case '\'': case '(': case ')':           // sub-delims
    case '*': case '+': case ',': case '=':
    case ':': case '@':
        return true;
    default:
        return false;
    }
}

/// is_literal of every byte, for the scan of paths that may need no normalising.
constexpr auto literal_bytes = byte_table([](unsigned char c) { return is_literal(static_cast<char>(c)); });

/// The path and what follows it in an absolute-form target ("http://h:1/a?q" -> "/a?q",
/// "https://h" -> ""); `uri` itself when it has no "scheme://" in front.
std::string_view skip_scheme_and_authority(std::string_view uri) noexcept {
    if (uri.empty() || !is_alpha(uri.front())) return uri;
    std::size_t i = 1;
    while (i < uri.size() && (is_alpha(uri[i]) || is_digit(uri[i]) || uri[i] == '+' || uri[i] == '-' ||
                              uri[i] == '.')) {
        ++i;
    }
    if (uri.substr(i, 3) != "://") return uri;
    const auto path = uri.find_first_of("/?#", i + 3);
    return path == std::string_view::npos ? std::string_view{} : uri.substr(path);
}

/// Every %XX decoded once; a '%' not followed by two hex digits stays a '%' byte.
std::string decode_once(std::string_view path) {
    return *percent_decode(path, PercentOptions{.plus_is_space = false, .malformed = MalformedPercent::keep});
}

void append_encoded(std::string& out, std::string_view segment) {
    for (const char c : segment) {
        if (is_literal(c)) {
            out += c;
        } else {
            const auto b = static_cast<unsigned char>(c);
            out += '%';
            append_hex(out, b, HexCase::upper);
        }
    }
}

}  // namespace

std::string path_as_sent(std::string_view uri) {
    uri = skip_scheme_and_authority(uri);
    const std::string decoded = decode_once(uri.substr(0, uri.find_first_of("?#")));
    std::string out;
    out.reserve(decoded.size() + 1);
    if (!decoded.starts_with('/')) out += '/';
    for (std::size_t pos = 0;;) {
        const auto cut = decoded.find_first_of("/;", pos);
        append_encoded(out, std::string_view(decoded).substr(pos, cut == std::string::npos ? cut : cut - pos));
        if (cut == std::string::npos) break;
        out += decoded[cut];
        pos = cut + 1;
    }
    return out;
}

bool is_normal_path(std::string_view path) noexcept {
    if (path.empty() || path.front() != '/') return false;
    for (std::size_t i = 1; i < path.size(); ++i) {
        const char c = path[i];
        const bool starts_segment = path[i - 1] == '/';
        if (c == '/') {
            if (starts_segment) return false;  // "//": an empty segment
            continue;
        }
        if (!literal_bytes[static_cast<unsigned char>(c)]) return false;
        if (c != '.' || !starts_segment) continue;
        // A segment starting with '.': "." or ".." end at the next '/' or the end.
        const std::string_view rest = path.substr(i);
        if (rest == "." || rest.starts_with("./") || rest == ".." || rest.starts_with("../")) return false;
    }
    return true;
}

std::string normalize_path(std::string_view uri) {
    uri = skip_scheme_and_authority(uri);
    uri = uri.substr(0, uri.find_first_of("?#"));
    const std::string decoded = decode_once(uri);

    std::vector<std::string_view> segments;
    const std::string_view path = decoded;
    bool trailing = false;
    for (std::size_t pos = 0;;) {
        const auto slash = path.find('/', pos);
        std::string_view seg =
            path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
        // "/login;jsessionid=x" and "/..;/login" (Tomcat, Jetty): parameters are not the path.
        seg = seg.substr(0, seg.find(';'));
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
    out.reserve(decoded.size() + 1);
    for (const auto seg : segments) {
        out += '/';
        append_encoded(out, seg);
    }
    if (out.empty() || trailing) out += '/';
    return out;
}

}  // namespace ratelimitd::policy
