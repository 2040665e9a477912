// The small facts of rls_domain.hpp: unit lengths as envoyproxy/ratelimit divides time, and
// the exact-rule index key.
#include "ratelimitd/policy/rls_domain.hpp"

namespace ratelimitd::policy {

std::string RlsLevel::exact_index(std::string_view key, std::string_view value) {
    // The key's length first, so ("a", "bc") and ("ab", "c") never share an index key,
    // whatever bytes either holds.
    std::string out = std::to_string(key.size());
    out.push_back(':');
    out.append(key).append(value);
    return out;
}

std::string escape_label_part(std::string_view part) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(part.size());
    for (const char ch : part) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\' && c != '%') {
            out.push_back(ch);
        } else {
            out.push_back('%');
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 0x0F]);
        }
    }
    return out;
}

std::int64_t unit_seconds(RlsUnit unit) noexcept {
    switch (unit) {
    case RlsUnit::second: return 1;
    case RlsUnit::minute: return 60;
    case RlsUnit::hour: return 60 * 60;
    case RlsUnit::day: return 24 * 60 * 60;
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
    case RlsUnit::month: return "month";
    case RlsUnit::year: return "year";
    case RlsUnit::unknown: break;
    }
    return "unknown";
}

}  // namespace ratelimitd::policy
