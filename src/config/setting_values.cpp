// The text and file rules of each setting type, with the messages users see.
#include "ratelimitd/config/setting_values.hpp"

#include "ratelimitd/core/duration.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <optional>

namespace ratelimitd::config {
namespace {

// What people write for a switch, in flags, variables and YAML alike: YAML 1.2 reads `on` as
// text, and a refused `on` where a document says `on` stops the process for nothing.
constexpr std::array<std::string_view, 3> switch_on_words{"on", "yes", "true"};
constexpr std::array<std::string_view, 3> switch_off_words{"off", "no", "false"};
constexpr const char* switch_expected = "on or off (also yes/no, true/false)";


// "a, b or c".
std::string either(std::span<const std::string_view> words) {
    std::string out;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
        out += words[i];
    }
    return out;
}

std::string count_range(const SettingRow& row, std::string_view noun) {
    return std::string(row.zero_allowed ? "0 (no cap) or " : "") + std::string(noun) + " " +
           std::to_string(row.lo) + ".." + std::to_string(row.hi);
}

bool count_accepts(const SettingRow& row, std::int64_t n) {
    return (n >= row.lo && n <= row.hi) || (row.zero_allowed && n == 0);
}

std::string duration_range(const SettingRow& row) {
    return std::string(row.zero_allowed ? "0s (none) or " : "") + "a duration from " +
           format_duration(std::chrono::milliseconds(row.lo)) + " to " +
           format_duration(std::chrono::milliseconds(row.hi));
}

/// "0", "0s", "00ms", ...: no duration at all, which parse_duration refuses (a timeout of 0 is
/// a typo) and a row with zero_allowed takes ("none").
bool zero_duration(std::string_view text) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] == '0') ++digits;
    if (digits == 0 || (digits < text.size() && text[digits] >= '1' && text[digits] <= '9')) return false;
    return digits == text.size() || parse_duration("1" + std::string(text.substr(digits))).has_value();
}

bool duration_accepts(const SettingRow& row, std::chrono::milliseconds d) {
    return d.count() >= row.lo && d.count() <= row.hi;
}

result<SettingValue> text_count(const SettingRow& row, const std::string& text) {
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size() || !count_accepts(row, n)) {
        return invalid_request(std::string(row.label()) + ": expected " + count_range(row, "a whole number") + ", got \"" +
                   text + "\"");
    }
    return SettingValue(std::in_place_type<std::int64_t>, n);
}

result<SettingValue> text_duration(const SettingRow& row, const std::string& text) {
    if (row.zero_allowed && zero_duration(text)) return SettingValue(std::chrono::milliseconds(0));
    const auto d = parse_duration(text);
    if (!d) return invalid_request(std::string(row.label()) + ": " + d.error().detail);
    if (!duration_accepts(row, *d)) {
        return invalid_request(std::string(row.label()) + ": expected " + duration_range(row) + ", got \"" + text + "\"");
    }
    return SettingValue(*d);
}

result<SettingValue> text_word(const SettingRow& row, std::span<const std::string_view> words,
                               const std::string& text) {
    for (const auto w : words) {
        if (w == text) return SettingValue(text);
    }
    return invalid_request(std::string(row.label()) + ": expected " + either(words) + ", got \"" + text + "\"");
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

bool is_any_of(std::string_view text, std::span<const std::string_view> words) {
    return std::any_of(words.begin(), words.end(), [text](std::string_view w) { return equals_ignoring_case(w, text); });
}

// The switch a word names, or nothing.
std::optional<bool> switch_word(std::string_view text) {
    if (is_any_of(text, switch_on_words)) return true;
    if (is_any_of(text, switch_off_words)) return false;
    return std::nullopt;
}

result<SettingValue> text_switch(const SettingRow& row, const std::string& text) {
    const auto on = switch_word(text);
    if (!on) return invalid_request(std::string(row.label()) + ": expected " + switch_expected + ", got \"" + text + "\"");
    return SettingValue(std::in_place_type<bool>, *on);
}

// A YAML or JSON boolean, or one of the words a flag takes.
result<SettingValue> file_switch(const ConfigTree& v) {
    std::optional<bool> on;
    if (v.is_boolean()) on = v.get<bool>();
    if (v.is_string()) on = switch_word(v.get_ref<const std::string&>());
    if (!on) return invalid_request(std::string("expected ") + switch_expected + ", got " + describe(v));
    return SettingValue(std::in_place_type<bool>, *on);
}

result<SettingValue> file_listen(const ConfigTree& v) {
    const std::string expected = "HOST:PORT such as \"127.0.0.1:8080\" or \"[::1]:8080\"";
    if (!v.is_string() || !is_host_port(v.get_ref<const std::string&>())) {
        return invalid_request("expected " + expected + ", got " + describe(v));
    }
    return SettingValue(v.get<std::string>());
}

// The URL may carry a password: say what is wrong without echoing it.
constexpr const char* redis_url_expected = "a URL such as \"redis://127.0.0.1:6379\"";

std::string unknown_scheme() {
    return std::string("expected ") + redis_url_expected +
           " (starting with \"redis://\", \"redis-sentinel://\" or \"redis-cluster://\", or \"rediss\" for TLS)";
}

bool known_scheme(std::string_view url) {
    const auto schemes = store_url_schemes();
    return std::any_of(schemes.begin(), schemes.end(), [url](std::string_view s) { return url.starts_with(s); });
}

result<SettingValue> file_redis_url(const ConfigTree& v) {
    if (!v.is_string()) return invalid_request(std::string("expected ") + redis_url_expected + ", got " + type_name(v));
    const auto& url = v.get_ref<const std::string&>();
    if (!known_scheme(url)) return invalid_request(unknown_scheme());
    return SettingValue(url);
}

// A flag or a variable: the same schemes as the file.
result<SettingValue> text_redis_url(const SettingRow& row, const std::string& text) {
    if (!known_scheme(text)) return invalid_request(std::string(row.label()) + ": " + unknown_scheme());
    return SettingValue(text);
}

result<SettingValue> file_count(const SettingRow& row, const ConfigTree& v) {
    if (row.zero_allowed && v.is_number_integer() && v.get<std::int64_t>() == 0) {
        return SettingValue(std::in_place_type<std::int64_t>, 0);
    }
    auto n = integer_in(v, row.lo, row.hi);
    if (!n && row.zero_allowed) return invalid_request("expected " + count_range(row, "an integer") + ", got " + describe(v));
    if (!n) return n.error();
    return SettingValue(std::in_place_type<std::int64_t>, *n);
}

result<SettingValue> file_duration(const SettingRow& row, const ConfigTree& v) {
    if (row.zero_allowed && ((v.is_number_integer() && v.get<std::int64_t>() == 0) ||
                             (v.is_string() && zero_duration(v.get_ref<const std::string&>())))) {
        return SettingValue(std::chrono::milliseconds(0));
    }
    const auto d = duration_of(v);
    if (!d) return d.error();
    if (!duration_accepts(row, *d)) return invalid_request("expected " + duration_range(row) + ", got " + describe(v));
    return SettingValue(*d);
}

result<SettingValue> file_secret(const SettingRow& row, const ConfigTree& v) {
    // A secret: say what is wrong without echoing it.
    if (!v.is_string() || v.get_ref<const std::string&>().size() < static_cast<std::size_t>(row.lo)) {
        return invalid_request("expected a string of at least " + std::to_string(row.lo) + " bytes");
    }
    return SettingValue(v.get<std::string>());
}

result<SettingValue> file_fraction(const ConfigTree& v) {
    if (!v.is_number() || v.get<double>() < 0.0 || v.get<double>() > 1.0) {
        return invalid_request("expected a number from 0 to 1, got " + describe(v));
    }
    return SettingValue(v.get<double>());
}

result<SettingValue> text_number(const SettingRow& row, const std::string& text) {
    double x = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
    if (ec != std::errc{} || end != text.data() + text.size() || !(x >= static_cast<double>(row.lo)) ||
        !(x <= static_cast<double>(row.hi))) {
        return invalid_request(std::string(row.label()) + ": expected a number " + std::to_string(row.lo) + ".." +
                   std::to_string(row.hi) + ", got \"" + text + "\"");
    }
    return SettingValue(x);
}

result<SettingValue> file_number(const SettingRow& row, const ConfigTree& v) {
    if (!v.is_number() || !(v.get<double>() >= static_cast<double>(row.lo)) ||
        !(v.get<double>() <= static_cast<double>(row.hi))) {
        return invalid_request("expected a number " + std::to_string(row.lo) + ".." + std::to_string(row.hi) + ", got " +
                   describe(v));
    }
    return SettingValue(v.get<double>());
}

char pair_separator(const SettingRow& row) { return row.type == SettingType::headers ? ':' : '='; }

result<SettingValue> text_pairs(const SettingRow& row, const std::string& text) {
    auto pairs = parse_pairs(text, pair_separator(row), row.label());
    if (!pairs) return pairs.error();
    return SettingValue(text);
}

result<SettingValue> file_pairs(const SettingRow& row, const ConfigTree& v) {
    if (!v.is_string()) return invalid_request("expected text such as \"a" + std::string(1, pair_separator(row)) + "b\", got " + describe(v));
    // The caller names the key: the message drops the name parse_pairs puts first.
    auto pairs = parse_pairs(v.get_ref<const std::string&>(), pair_separator(row), "");
    if (!pairs) return invalid_request(pairs.error().detail.substr(2));
    return SettingValue(v.get<std::string>());
}

bool is_header_name_byte(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

bool is_printable(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

}  // namespace

result<std::vector<std::pair<std::string, std::string>>> parse_pairs(std::string_view text, char separator,
                                                                     std::string_view name) {
    const bool header = separator == ':';
    const std::string what = header ? "NAME:VALUE" : "KEY=VALUE";
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t start = 0;
    for (std::size_t index = 0; start <= text.size(); ++index) {
        auto comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        const std::string_view item = text.substr(start, comma - start);
        start = comma + 1;
        if (item.find_first_not_of(" \t") == std::string_view::npos) continue;
        const std::string at = std::string(name) + ": item " + std::to_string(index + 1) + ": ";
        const auto sep = item.find(separator);
        if (sep == std::string_view::npos || sep == 0) {
            return invalid_request(at + "expected " + what + " (items separated by ','), got no " +
                       (sep == 0 ? std::string(header ? "name" : "key") : "'" + std::string(1, separator) + "'"));
        }
        std::string key(item.substr(0, sep));
        const std::string value(item.substr(sep + 1));
        if (header) {
            std::transform(key.begin(), key.end(), key.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (key.size() > 64 || !std::all_of(key.begin(), key.end(), is_header_name_byte) || key.starts_with("grpc-")) {
                return invalid_request(at + "expected a header name of 1..64 bytes of a-z, 0-9, '-', '_', '.' (not grpc-*)");
            }
        } else if (key.size() > 256 || !is_printable(key)) {
            return invalid_request(at + "expected a key of 1..256 printable bytes");
        }
        if (value.size() > 4096 || !is_printable(value)) {
            return invalid_request(at + "expected a value of at most 4096 printable ASCII bytes");
        }
        out.emplace_back(std::move(key), value);
    }
    return out;
}

result<SettingValue> text_value(const SettingRow& row, const std::string& text) {
    switch (row.type) {
    case SettingType::path: return SettingValue(text);
    case SettingType::redis_url: return text_redis_url(row, text);
    case SettingType::listen: {
        const auto host_port = parse_listen(text, row.label());
        if (!host_port) return host_port.error();
        return SettingValue(text);
    }
    case SettingType::count: return text_count(row, text);
    case SettingType::duration: return text_duration(row, text);
    case SettingType::choice: return text_word(row, row.choices, text);
    case SettingType::on_off: return text_switch(row, text);
    case SettingType::secret:
        if (text.size() < static_cast<std::size_t>(row.lo)) {
            return invalid_request(std::string(row.label()) + ": expected at least " + std::to_string(row.lo) + " bytes");
        }
        return SettingValue(text);
    case SettingType::number: return text_number(row, text);
    case SettingType::key_values:
    case SettingType::headers: return text_pairs(row, text);
    case SettingType::fraction: break;
    }
    return invalid_request(std::string(row.label()) + ": cannot be set from text");
}

result<SettingValue> file_value(const SettingRow& row, const ConfigTree& v) {
    switch (row.type) {
    case SettingType::listen: return file_listen(v);
    case SettingType::redis_url: return file_redis_url(v);
    case SettingType::count: return file_count(row, v);
    case SettingType::duration: return file_duration(row, v);
    case SettingType::choice: {
        auto word = one_of(v, row.choices);
        if (!word) return word.error();
        return SettingValue(std::move(*word));
    }
    case SettingType::secret: return file_secret(row, v);
    case SettingType::fraction: return file_fraction(v);
    case SettingType::number: return file_number(row, v);
    case SettingType::key_values:
    case SettingType::headers: return file_pairs(row, v);
    case SettingType::path:
        if (!v.is_string()) return invalid_request("expected a file path or host name, got " + describe(v));
        return SettingValue(v.get<std::string>());
    case SettingType::on_off: return file_switch(v);
    }
    return invalid_request("cannot be set in the config file");
}

result<std::pair<std::string, unsigned short>> parse_listen(std::string_view text, std::string_view name) {
    std::string_view host, port;
    if (!text.empty() && text.front() == '[') {
        auto close = text.find(']');
        if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
            return invalid_request(std::string(name) + ": expected HOST:PORT or [IPV6]:PORT, got \"" + std::string(text) + "\"");
        }
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        auto colon = text.rfind(':');
        if (colon == std::string_view::npos) {
            return invalid_request(std::string(name) + ": expected HOST:PORT, got \"" + std::string(text) + "\"");
        }
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    unsigned p = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (host.empty() || ec != std::errc{} || end != port.data() + port.size() || p > 65535) {
        return invalid_request(std::string(name) + ": expected HOST:PORT with a port 0..65535, got \"" + std::string(text) + "\"");
    }
    return std::pair{std::string(host), static_cast<unsigned short>(p)};
}

bool is_host_port(std::string_view s) {
    std::string_view host;
    std::string_view port;
    if (s.starts_with('[')) {
        const auto close = s.find("]:");
        if (close == std::string_view::npos) return false;
        host = s.substr(1, close - 1);
        port = s.substr(close + 2);
    } else {
        const auto colon = s.rfind(':');
        if (colon == std::string_view::npos) return false;
        host = s.substr(0, colon);
        port = s.substr(colon + 1);
        if (host.find(':') != std::string_view::npos) return false;  // unbracketed IPv6
    }
    if (host.empty() || host.find_first_of(" \t[]/") != std::string_view::npos) return false;
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) {
        return false;
    }
    return std::stoi(std::string(port)) <= 65535;
}

}  // namespace ratelimitd::config
