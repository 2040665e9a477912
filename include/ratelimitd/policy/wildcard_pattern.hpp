// A descriptor rule's `value` with '*' in it, as envoyproxy/ratelimit matches it: each '*'
// takes any run of bytes (the empty one too), anywhere in the value ("foo*", "bar*b",
// "foo*bar*baz", "*").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::policy {

/// Matches in time linear in the value and the pattern, whatever either holds: the value must
/// start with the text before the first '*' and end with the text after the last one; the
/// parts between are found left to right, each at its first place after the one before (the
/// earliest place leaves the most room to the rest, so a match is never missed), with a
/// precomputed Knuth-Morris-Pratt table so no byte of the value is compared more than twice
/// per part. Worst case O(|value| + |pattern|) per rule; nothing is allocated per call.
class WildcardPattern {
public:
    /// `pattern` holds at least one '*'.
    explicit WildcardPattern(std::string_view pattern);

    [[nodiscard]] bool matches(std::string_view value) const noexcept;

    /// How many byte comparisons `matches(value)` makes, by the same code: the linear bound
    /// made countable, so a test can hold it exactly instead of timing it.
    [[nodiscard]] std::size_t comparisons(std::string_view value) const noexcept;

private:
    /// One part between two '*': its text and, for each prefix of it, the length of the
    /// longest proper prefix that is also a suffix (where a failed comparison resumes).
    struct Part {
        std::string text;
        std::vector<std::uint32_t> fallback;
    };

    /// matches(), each byte comparison reported to `count` (a no-op in matches(): inlined away).
    template <class Count>
    bool match(std::string_view value, Count& count) const noexcept;

    /// Where `part` first occurs in `text`, or npos.
    template <class Count>
    static std::size_t find(std::string_view text, const Part& part, Count& count) noexcept;

    std::string head_;            ///< before the first '*'
    std::string tail_;            ///< after the last '*'
    std::vector<Part> middle_;    ///< between them, empty ones left out
    std::size_t fixed_bytes_ = 0; ///< head, tail and every middle part: the shortest value matched
};

}  // namespace ratelimitd::policy
