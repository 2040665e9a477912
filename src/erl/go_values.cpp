// Go's value syntax, as envoyproxy/ratelimit's envconfig reads its variables.
#include "ratelimitd/erl/go_values.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

namespace ratelimitd::erl {

std::optional<bool> parse_go_bool(std::string_view text) noexcept {
    for (const std::string_view yes : {"1", "t", "T", "TRUE", "true", "True"}) {
        if (text == yes) return true;
    }
    for (const std::string_view no : {"0", "f", "F", "FALSE", "false", "False"}) {
        if (text == no) return false;
    }
    return std::nullopt;
}

std::optional<std::int64_t> parse_go_int(std::string_view text) noexcept {
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::optional<double> parse_go_number(std::string_view text) noexcept {
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) {
        return std::nullopt;
    }
    return value;
}

namespace {

// Go's units, longest first where one is the other's prefix ("ms" before "m").
constexpr std::array<std::pair<std::string_view, double>, 8> go_units{{
    {"ns", 1e-6},
    {"us", 1e-3},
    {"\xC2\xB5s", 1e-3},
    {"ms", 1.0},
    {"s", 1e3},
    {"m", 60e3},
    {"h", 3600e3},
    {"\xCE\xBCs", 1e-3},
}};

}  // namespace

std::optional<std::chrono::milliseconds> parse_go_duration(std::string_view text) noexcept {
    if (text == "0") return std::chrono::milliseconds{0};
    if (text.empty()) return std::nullopt;
    if (text.front() == '+') text.remove_prefix(1);
    double total_ms = 0;
    while (!text.empty()) {
        std::size_t n = 0;
        while (n < text.size() && ((text[n] >= '0' && text[n] <= '9') || text[n] == '.')) ++n;
        if (n == 0) return std::nullopt;
        const auto number = parse_go_number(text.substr(0, n));
        if (!number) return std::nullopt;
        text.remove_prefix(n);
        const std::pair<std::string_view, double>* unit = nullptr;
        for (const auto& u : go_units) {
            if (text.starts_with(u.first) && (unit == nullptr || u.first.size() > unit->first.size())) unit = &u;
        }
        if (unit == nullptr) return std::nullopt;  // Go requires a unit on every number but a lone "0"
        text.remove_prefix(unit->first.size());
        total_ms += *number * unit->second;
    }
    // Beyond Go's own range (about 292 years) is not a duration.
    if (total_ms > 9.2e15) return std::nullopt;
    return std::chrono::milliseconds{static_cast<std::int64_t>(std::floor(total_ms))};
}

}  // namespace ratelimitd::erl
