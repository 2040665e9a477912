// Access-log timestamps: parsed by hand (a log has millions of them; sscanf and std::get_time
// are too slow and depend on the locale).
#include "ratelimitd/simulate/log_time.hpp"

#include <chrono>
#include <cstdio>

namespace ratelimitd::simulate {
namespace {

// Reads exactly `n` decimal digits at `pos`; nullopt when one of them is not a digit.
std::optional<int> digits(std::string_view s, std::size_t pos, std::size_t n) {
    if (pos + n > s.size()) return std::nullopt;
    int v = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return std::nullopt;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

std::optional<int> month_of(std::string_view abbrev) {
    static constexpr std::string_view names[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (int i = 0; i < 12; ++i) {
        if (abbrev == names[i]) return i + 1;
    }
    return std::nullopt;
}

// Milliseconds since the epoch of a civil UTC time; nullopt for an impossible date or time.
std::optional<std::int64_t> epoch_ms(int y, int mo, int d, int h, int mi, int s) {
    using namespace std::chrono;
    const year_month_day date{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
    if (!date.ok() || h > 23 || mi > 59 || s > 60) return std::nullopt;
    const auto days = sys_days{date}.time_since_epoch().count();
    return ((static_cast<std::int64_t>(days) * 24 + h) * 60 + mi) * 60'000 + static_cast<std::int64_t>(s) * 1000;
}

// "+0100" / "-07:00" -> minutes east of UTC.
std::optional<int> offset_minutes(std::string_view s) {
    if (s.size() < 5 || (s[0] != '+' && s[0] != '-')) return std::nullopt;
    const auto hh = digits(s, 1, 2);
    const std::size_t mm_at = s[3] == ':' ? 4 : 3;
    const auto mm = digits(s, mm_at, 2);
    if (!hh || !mm || s.size() != mm_at + 2 || *hh > 23 || *mm > 59) return std::nullopt;
    const int minutes = *hh * 60 + *mm;
    return s[0] == '-' ? -minutes : minutes;
}

}  // namespace

std::optional<std::int64_t> parse_time_local(std::string_view t) {
    // 02/Dec/2026:13:20:05 +0100
    if (t.size() != 26 || t[2] != '/' || t[6] != '/' || t[11] != ':' || t[14] != ':' || t[17] != ':' ||
        t[20] != ' ') {
        return std::nullopt;
    }
    const auto d = digits(t, 0, 2);
    const auto mo = month_of(t.substr(3, 3));
    const auto y = digits(t, 7, 4);
    const auto h = digits(t, 12, 2);
    const auto mi = digits(t, 15, 2);
    const auto s = digits(t, 18, 2);
    const auto off = offset_minutes(t.substr(21));
    if (!d || !mo || !y || !h || !mi || !s || !off) return std::nullopt;
    const auto local = epoch_ms(*y, *mo, *d, *h, *mi, *s);
    if (!local) return std::nullopt;
    return *local - static_cast<std::int64_t>(*off) * 60'000;
}

std::optional<std::int64_t> parse_iso8601(std::string_view t) {
    // 2026-12-02T13:20:05[.fff][Z|+01:00]
    if (t.size() < 20 || t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != 't' && t[10] != ' ') ||
        t[13] != ':' || t[16] != ':') {
        return std::nullopt;
    }
    const auto y = digits(t, 0, 4);
    const auto mo = digits(t, 5, 2);
    const auto d = digits(t, 8, 2);
    const auto h = digits(t, 11, 2);
    const auto mi = digits(t, 14, 2);
    const auto s = digits(t, 17, 2);
    if (!y || !mo || !d || !h || !mi || !s) return std::nullopt;
    std::size_t pos = 19;
    std::int64_t ms = 0;
    if (pos < t.size() && t[pos] == '.') {
        ++pos;
        int scale = 100;
        const std::size_t start = pos;
        while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9') {
            ms += scale * (t[pos] - '0');
            scale /= 10;
            ++pos;
        }
        if (pos == start) return std::nullopt;
    }
    int offset = 0;
    const std::string_view zone = t.substr(pos);
    if (zone == "Z" || zone == "z") {
        offset = 0;
    } else if (auto off = offset_minutes(zone)) {
        offset = *off;
    } else {
        return std::nullopt;
    }
    const auto local = epoch_ms(*y, *mo, *d, *h, *mi, *s);
    if (!local) return std::nullopt;
    return *local + ms - static_cast<std::int64_t>(offset) * 60'000;
}

std::optional<std::int64_t> parse_epoch_seconds(std::string_view t) {
    if (t.empty() || t.size() > 24) return std::nullopt;
    std::int64_t seconds = 0;
    std::size_t pos = 0;
    while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9') seconds = seconds * 10 + (t[pos++] - '0');
    if (pos == 0 || pos > 12) return std::nullopt;
    std::int64_t ms = 0;
    if (pos < t.size()) {
        if (t[pos] != '.') return std::nullopt;
        int scale = 100;
        for (++pos; pos < t.size(); ++pos) {
            if (t[pos] < '0' || t[pos] > '9') return std::nullopt;
            ms += scale * (t[pos] - '0');
            scale /= 10;
        }
    }
    return seconds * 1000 + ms;
}

std::optional<std::int64_t> parse_any_time(std::string_view t) {
    if (t.size() == 26 && t[2] == '/') return parse_time_local(t);
    if (t.size() >= 20 && t[4] == '-') return parse_iso8601(t);
    return parse_epoch_seconds(t);
}

std::string format_rfc3339(std::int64_t epoch_ms) {
    using namespace std::chrono;
    const sys_time<milliseconds> tp{milliseconds{epoch_ms}};
    const auto day = floor<days>(tp);
    const year_month_day date{day};
    const hh_mm_ss time{tp - day};
    char out[40];
    const int ms = static_cast<int>(time.subseconds().count());
    if (ms != 0) {
        std::snprintf(out, sizeof out, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<int>(date.year()),
                      static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                      static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                      static_cast<int>(time.seconds().count()), ms);
    } else {
        std::snprintf(out, sizeof out, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(date.year()),
                      static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                      static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                      static_cast<int>(time.seconds().count()));
    }
    return out;
}

}  // namespace ratelimitd::simulate
