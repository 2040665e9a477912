// The small facts of rls_domain.hpp: unit lengths as envoyproxy/ratelimit divides time, the
// exact-rule index key, and which bytes a rule label keeps.
#include "ratelimitd/policy/rls_domain.hpp"

#include "ratelimitd/core/percent.hpp"

namespace ratelimitd::policy {
namespace {

// Printable ASCII but for the quote, the backslash and '%' (escape_label_part).
bool label_keeps(unsigned char c) noexcept { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\' && c != '%'; }

}  // namespace

std::string RlsLevel::exact_index(std::string_view key, std::string_view value) {
    // The key's length first, so ("a", "bc") and ("ab", "c") never share an index key,
    // whatever bytes either holds.
    std::string out = std::to_string(key.size());
    out.push_back(':');
    out.append(key).append(value);
    return out;
}

std::string escape_label_part(std::string_view part) { return percent_encode(part, &label_keeps); }

std::int64_t unit_seconds(RlsUnit unit) noexcept {
    switch (unit) {
    case RlsUnit::second: return 1;
    case RlsUnit::minute: return 60;
    case RlsUnit::hour: return 60 * 60;
    case RlsUnit::day: return 24 * 60 * 60;
    case RlsUnit::week: return 7 * 24 * 60 * 60;  // from the epoch, a Thursday, as there
    case RlsUnit::month: return 30 * 24 * 60 * 60;  // envoyproxy/ratelimit's month: 30 days
    case RlsUnit::year: return 365 * 24 * 60 * 60;  // and its year: 365 days
    case RlsUnit::unknown: break;
    }
    return 0;
}

const char* to_string(RlsUnit unit) noexcept {
    switch (unit) {
    case RlsUnit::second: return "second";
    case RlsUnit::minute: return "minute";
    case RlsUnit::hour: return "hour";
    case RlsUnit::day: return "day";
    case RlsUnit::week: return "week";
    case RlsUnit::month: return "month";
    case RlsUnit::year: return "year";
    case RlsUnit::unknown: break;
    }
    return "unknown";
}

}  // namespace ratelimitd::policy
