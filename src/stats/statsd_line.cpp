// statsd lines: the counter form only (every stat emitted is a counter).
#include "ratelimitd/stats/statsd_line.hpp"

#include <algorithm>

namespace ratelimitd::stats {

namespace {

std::string clean(std::string_view s) {
    std::string out(s);
    for (auto& c : out) {
        const auto u = static_cast<unsigned char>(c);
        if (c == ':' || c == '|' || u <= 0x20 || u >= 0x7f) c = '_';
    }
    return out;
}

}  // namespace

std::string statsd_tag_suffix(StatTags tags) {
    std::sort(tags.begin(), tags.end());
    std::string out;
    for (const auto& [name, value] : tags) out += ".__" + clean(name) + "=" + clean(value);
    return out;
}

void append_statsd_counter(std::string& out, std::string_view name, std::string_view tag_suffix, std::uint64_t delta) {
    out.append(name).append(tag_suffix).append(":").append(std::to_string(delta)).append("|c\n");
}

}  // namespace ratelimitd::stats
