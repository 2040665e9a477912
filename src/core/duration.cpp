// Parsing and printing of config-file durations ("500ms", "60s", "1m", "2h", "1d").
#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/core/quote.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

namespace ratelimitd {
namespace {


Problem bad_duration(std::string_view text, std::string_view why = {}) {
    std::string detail =
        "expected a duration such as \"500ms\", \"60s\" or \"1m\", got " + quote(text);
    if (!why.empty()) {
        detail += " (";
        detail += why;
        detail += ')';
    }
    return Problem{errc::invalid_request, std::move(detail)};
}

struct Unit {
    std::string_view suffix;
    std::int64_t ms;
};

// Largest first, so format_duration picks the shortest exact spelling.
constexpr Unit units[] = {
    {"d", 86'400'000}, {"h", 3'600'000}, {"m", 60'000}, {"s", 1'000}, {"ms", 1}};

}  // namespace

result<std::chrono::milliseconds> parse_duration(std::string_view text) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    if (digits == 0) return bad_duration(text);

    const std::string_view suffix = text.substr(digits);
    const Unit* unit = nullptr;
    for (const auto& u : units) {
        if (u.suffix == suffix) unit = &u;
    }
    if (unit == nullptr) return bad_duration(text);

    std::int64_t count = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, count);
    if (ec == std::errc::result_out_of_range ||
        count > std::numeric_limits<std::int64_t>::max() / unit->ms) {
        return bad_duration(text, "too large");
    }
    if (ec != std::errc{} || end != text.data() + digits) return bad_duration(text);
    if (count == 0) return bad_duration(text, "must be at least 1ms");
    return std::chrono::milliseconds{count * unit->ms};
}

std::string format_duration(std::chrono::milliseconds d) {
    const std::int64_t ms = d.count();
    if (ms <= 0) return std::to_string(ms) + "ms";
    for (const auto& u : units) {
        if (ms % u.ms == 0) return std::to_string(ms / u.ms) + std::string(u.suffix);
    }
    return std::to_string(ms) + "ms";  // unreachable: every count is a multiple of 1ms
}

}  // namespace ratelimitd
