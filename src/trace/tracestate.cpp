// tracestate: the list grammar of §3.3.1, checked member by member.
#include "ratelimitd/trace/tracestate.hpp"

#include <algorithm>
#include <vector>

namespace ratelimitd::trace {
namespace {

bool is_lcalpha(char c) noexcept { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_key_char(char c) noexcept {
    return is_lcalpha(c) || is_digit(c) || c == '_' || c == '-' || c == '*' || c == '/';
}

// simple-key = lcalpha 0*255(key char); tenant-id starts with lcalpha or a digit, then up to
// 240 key chars; system-id = lcalpha 0*13(key char).
bool valid_key(std::string_view key) noexcept {
    const auto at = key.find('@');
    const auto all_key_chars = [](std::string_view s) { return std::all_of(s.begin(), s.end(), is_key_char); };
    if (at == std::string_view::npos) {
        return !key.empty() && key.size() <= 256 && is_lcalpha(key[0]) && all_key_chars(key);
    }
    const auto tenant = key.substr(0, at);
    const auto system = key.substr(at + 1);
    return !tenant.empty() && tenant.size() <= 241 && (is_lcalpha(tenant[0]) || is_digit(tenant[0])) &&
           all_key_chars(tenant) && !system.empty() && system.size() <= 14 && is_lcalpha(system[0]) &&
           all_key_chars(system);
}

// value = 0*255(chr) nblk-chr; chr is a space or nblk-chr, nblk-chr is 0x21..0x7e but ',' and '='.
bool valid_value(std::string_view value) noexcept {
    const auto nblk = [](char c) { return c >= 0x21 && c <= 0x7e && c != ',' && c != '='; };
    if (value.empty() || value.size() > 256 || !nblk(value.back())) return false;
    return std::all_of(value.begin(), value.end(), [&](char c) { return c == ' ' || nblk(c); });
}

std::string_view trim_ows(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

std::optional<std::string> normalize_tracestate(std::string_view header) {
    if (header.size() > tracestate_max_bytes) return std::nullopt;
    std::vector<std::string_view> keys;
    std::string out;
    while (true) {
        const auto comma = header.find(',');
        const auto member = trim_ows(header.substr(0, comma));
        if (!member.empty()) {
            const auto eq = member.find('=');
            if (eq == std::string_view::npos) return std::nullopt;
            const auto key = member.substr(0, eq);
            if (!valid_key(key) || !valid_value(member.substr(eq + 1))) return std::nullopt;
            if (std::find(keys.begin(), keys.end(), key) != keys.end()) return std::nullopt;
            if (keys.size() == tracestate_max_members) return std::nullopt;
            keys.push_back(key);
            if (!out.empty()) out += ',';
            out += member;
        }
        if (comma == std::string_view::npos) break;
        header.remove_prefix(comma + 1);
    }
    return out;
}

}  // namespace ratelimitd::trace
