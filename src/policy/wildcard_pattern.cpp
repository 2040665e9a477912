// WildcardPattern: anchored head and tail, then each middle part at its first place (KMP).
#include "ratelimitd/policy/wildcard_pattern.hpp"

namespace ratelimitd::policy {

WildcardPattern::WildcardPattern(std::string_view pattern) {
    const std::size_t first = pattern.find('*');
    const std::size_t last = pattern.rfind('*');
    head_ = pattern.substr(0, first);
    tail_ = pattern.substr(last + 1);
    fixed_bytes_ = head_.size() + tail_.size();
    std::string_view rest = pattern.substr(first + 1, last - first);  // up to and with the last '*'
    while (!rest.empty()) {
        const std::size_t star = rest.find('*');
        const std::string_view text = rest.substr(0, star);
        rest.remove_prefix(star + 1);
        if (text.empty()) continue;  // "**" is one '*'
        Part part{std::string(text), std::vector<std::uint32_t>(text.size(), 0)};
        for (std::size_t i = 1, k = 0; i < text.size(); ++i) {
            while (k > 0 && text[i] != text[k]) k = part.fallback[k - 1];
            if (text[i] == text[k]) ++k;
            part.fallback[i] = static_cast<std::uint32_t>(k);
        }
        fixed_bytes_ += text.size();
        middle_.push_back(std::move(part));
    }
}

template <class Count>
std::size_t WildcardPattern::find(std::string_view text, const Part& part, Count& count) noexcept {
    const std::string_view p = part.text;
    for (std::size_t i = 0, k = 0; i < text.size(); ++i) {
        while (k > 0 && text[i] != p[k]) {
            count();
            k = part.fallback[k - 1];
        }
        count();
        if (text[i] == p[k]) ++k;
        if (k == p.size()) return i + 1 - p.size();
    }
    return std::string_view::npos;
}

template <class Count>
bool WildcardPattern::match(std::string_view value, Count& count) const noexcept {
    // Head and tail may not overlap: "ab*ba" does not take "aba".
    if (value.size() < fixed_bytes_ || !value.starts_with(head_) || !value.ends_with(tail_)) return false;
    std::string_view between = value.substr(head_.size(), value.size() - head_.size() - tail_.size());
    for (const Part& part : middle_) {
        const std::size_t at = find(between, part, count);
        if (at == std::string_view::npos) return false;
        between.remove_prefix(at + part.text.size());
    }
    return true;
}

bool WildcardPattern::matches(std::string_view value) const noexcept {
    auto none = [] {};
    return match(value, none);
}

std::size_t WildcardPattern::comparisons(std::string_view value) const noexcept {
    std::size_t n = head_.size() + tail_.size();  // starts_with and ends_with, at most
    auto one = [&n] { ++n; };
    (void)match(value, one);
    return n;
}

}  // namespace ratelimitd::policy
