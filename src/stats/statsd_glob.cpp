// Glob parts matched one dot-separated part of the name at a time; a part with several '*'
// is matched by trying each split (parts are short: a statsd name's component).
#include "ratelimitd/stats/statsd_glob.hpp"

#include <cctype>

namespace ratelimitd::stats {

namespace {

// Matches `glob` (one part) against `part` entirely, from glob[g] and part[p] on.
bool part_match(std::string_view glob, std::size_t g, std::string_view part, std::size_t p,
                std::vector<std::string>& captures) {
    if (g == glob.size()) return p == part.size();
    if (glob[g] != '*') return p < part.size() && part[p] == glob[g] && part_match(glob, g + 1, part, p + 1, captures);
    // The longest run first, as a greedy `([^.]*)` takes it.
    for (std::size_t end = part.size() + 1; end-- > p;) {
        const std::size_t mark = captures.size();
        captures.emplace_back(part.substr(p, end - p));
        if (part_match(glob, g + 1, part, end, captures)) return true;
        captures.resize(mark);
    }
    return false;
}

}  // namespace

bool glob_match(const std::vector<std::string>& glob_parts, std::string_view name, std::vector<std::string>& captures) {
    const std::size_t mark = captures.size();
    std::size_t start = 0;
    for (std::size_t i = 0; i < glob_parts.size(); ++i) {
        const auto dot = name.find('.', start);
        const bool last = i + 1 == glob_parts.size();
        // The last glob part takes the rest, which must hold no more dots.
        if (last != (dot == std::string_view::npos)) {
            captures.resize(mark);
            return false;
        }
        const std::string_view part = name.substr(start, last ? std::string_view::npos : dot - start);
        if (!part_match(glob_parts[i], 0, part, 0, captures)) {
            captures.resize(mark);
            return false;
        }
        start = dot + 1;
    }
    return !glob_parts.empty();
}

std::string expand_captures(std::string_view text, const std::vector<std::string>& captures) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '$' || i + 1 == text.size()) {
            out += text[i];
            continue;
        }
        const bool braced = text[i + 1] == '{';
        std::size_t j = i + (braced ? 2 : 1);
        std::size_t n = 0;
        const std::size_t digits_start = j;
        while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) n = n * 10 + (text[j++] - '0');
        if (j == digits_start || (braced && (j == text.size() || text[j] != '}'))) {
            out += text[i];  // not a capture reference: kept as written
            continue;
        }
        if (n >= 1 && n <= captures.size()) out += captures[n - 1];
        i = braced ? j : j - 1;
    }
    return out;
}

}  // namespace ratelimitd::stats
