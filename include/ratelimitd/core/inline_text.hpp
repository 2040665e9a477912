// Text kept in place up to a fixed length, on the heap beyond it: for the short names a
// request carries from layer to layer (a tenant, a hashed identity) where std::string's own
// 15 inline bytes are too few and an allocation per request would be the price.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <ostream>
#include <string>
#include <string_view>

namespace ratelimitd {

/// Up to `Inline` bytes are held in the object itself; longer text goes to a std::string
/// member (so a long tenant still works, at an allocation). Copies and moves are plain member
/// copies: nothing points into the object. Reads as a std::string_view.
template <std::size_t Inline>
class InlineText {
public:
    static constexpr std::size_t inline_capacity = Inline;

    InlineText() noexcept = default;
    InlineText(std::string_view text) { assign(text); }  // NOLINT: text converts, as std::string does
    InlineText(const char* text) : InlineText(std::string_view(text)) {}  // NOLINT
    InlineText(const std::string& text) : InlineText(std::string_view(text)) {}  // NOLINT

    InlineText& operator=(std::string_view text) {
        assign(text);
        return *this;
    }
    InlineText& operator=(const char* text) { return *this = std::string_view(text); }
    InlineText& operator=(const std::string& text) { return *this = std::string_view(text); }

    void assign(std::string_view text) {
        if (text.size() <= Inline) {
            std::copy(text.begin(), text.end(), local_.begin());
            size_ = text.size();
            if (!heap_.empty()) heap_.clear();
            return;
        }
        heap_.assign(text);
        size_ = text.size();
    }

    /// Appends `text`, moving to the heap when the whole no longer fits in place.
    InlineText& append(std::string_view text) {
        const std::size_t total = size_ + text.size();
        if (total <= Inline) {
            std::copy(text.begin(), text.end(), local_.begin() + static_cast<std::ptrdiff_t>(size_));
        } else {
            if (size_ <= Inline) heap_.assign(local_.data(), size_);
            heap_.append(text);
        }
        size_ = total;
        return *this;
    }
    InlineText& operator+=(std::string_view text) { return append(text); }
    InlineText& operator+=(char c) { return append(std::string_view(&c, 1)); }

    /// Room for `n` bytes written through data() (then resize to what was written): `n` up to
    /// inline_capacity stays in place.
    void resize(std::size_t n) {
        if (n <= Inline) {
            if (size_ > Inline) std::memcpy(local_.data(), heap_.data(), n);
            heap_.clear();
        } else {
            if (size_ <= Inline) heap_.assign(local_.data(), size_);
            heap_.resize(n);
        }
        size_ = n;
    }

    [[nodiscard]] char* data() noexcept { return size_ <= Inline ? local_.data() : heap_.data(); }
    [[nodiscard]] const char* data() const noexcept { return size_ <= Inline ? local_.data() : heap_.data(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    [[nodiscard]] const char* begin() const noexcept { return data(); }
    [[nodiscard]] const char* end() const noexcept { return data() + size_; }
    void clear() noexcept {
        size_ = 0;
        heap_.clear();
    }

    [[nodiscard]] std::string_view view() const noexcept { return {data(), size_}; }
    operator std::string_view() const noexcept { return view(); }  // NOLINT: reads as text
    [[nodiscard]] std::string str() const { return std::string(view()); }
    [[nodiscard]] bool starts_with(std::string_view prefix) const noexcept { return view().starts_with(prefix); }

    friend bool operator==(const InlineText& a, const InlineText& b) noexcept { return a.view() == b.view(); }
    friend bool operator==(const InlineText& a, std::string_view b) noexcept { return a.view() == b; }
    friend bool operator==(const InlineText& a, const char* b) noexcept { return a.view() == std::string_view(b); }
    friend bool operator==(const InlineText& a, const std::string& b) noexcept { return a.view() == b; }
    friend auto operator<=>(const InlineText& a, const InlineText& b) noexcept { return a.view() <=> b.view(); }
    friend std::ostream& operator<<(std::ostream& out, const InlineText& t) { return out << t.view(); }

private:
    std::array<char, Inline> local_{};
    std::size_t size_ = 0;
    std::string heap_;  ///< the text when longer than Inline; empty otherwise
};

}  // namespace ratelimitd
