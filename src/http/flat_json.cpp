// read_flat_object: a single-pass scan over "{" (string ":" (string | digits) ",")* "}".
#include "ratelimitd/http/flat_json.hpp"

#include "ratelimitd/core/byte_table.hpp"

#include <array>

namespace ratelimitd::http {

namespace {

// The bytes string() takes as they are: printable ASCII but the quote and the backslash. One
// look-up a byte rather than three comparisons.
constexpr auto plain_string_bytes =
    byte_table([](unsigned char c) { return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\'; });

// The 18-digit bound keeps any accepted integer below 2^63, so no overflow check is needed.
constexpr std::size_t max_digits = 18;

class Cursor {
public:
    explicit Cursor(std::string_view text) noexcept : text_(text) {}

    // RFC 8259 §2: whitespace is space, tab, LF and CR, nothing else.
    void skip_space() noexcept {
        while (at_ < text_.size()) {
            const char c = text_[at_];
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
            ++at_;
        }
    }

    bool take(char c) noexcept {
        skip_space();
        if (at_ >= text_.size() || text_[at_] != c) return false;
        ++at_;
        return true;
    }

    bool peek(char c) noexcept {
        skip_space();
        return at_ < text_.size() && text_[at_] == c;
    }

    bool at_end() noexcept {
        skip_space();
        return at_ == text_.size();
    }

    // A string with no escape and no byte outside printable ASCII; the opening quote is next.
    std::optional<std::string_view> string() noexcept {
        if (!take('"')) return std::nullopt;
        const std::size_t start = at_;
        while (at_ < text_.size() && plain_string_bytes[static_cast<unsigned char>(text_[at_])]) ++at_;
        if (at_ == text_.size() || text_[at_] != '"') return std::nullopt;  // unterminated, or not plain
        return std::string_view(text_.data() + start, at_++ - start);
    }

    // Digits: "0", or a non-zero digit and up to 17 more; with `signs`, also '-' and a
    // non-zero digit ("-0" is left to the general parser, which reads it as 0).
    bool integer(FlatMember& m, FlatSigns signs) noexcept {
        skip_space();
        m.negative = signs == FlatSigns::allowed && at_ + 1 < text_.size() && text_[at_] == '-' &&
                     text_[at_ + 1] >= '1' && text_[at_ + 1] <= '9';
        if (m.negative) ++at_;
        const std::size_t start = at_;
        std::uint64_t n = 0;
        while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
            n = n * 10 + static_cast<std::uint64_t>(text_[at_] - '0');
            ++at_;
        }
        const std::size_t digits = at_ - start;
        if (digits == 0 || digits > max_digits || (digits > 1 && text_[start] == '0')) return false;
        // "12.5", "1e3" or "12x" continue the token: not an integer this reader takes.
        if (at_ < text_.size() && (text_[at_] == '.' || text_[at_] == 'e' || text_[at_] == 'E')) return false;
        m.value = std::string_view(text_.data() + start, digits);
        m.is_string = false;
        m.number = n;
        return true;
    }

private:
    std::string_view text_;
    std::size_t at_ = 0;
};

bool read_value(Cursor& in, FlatMember& m, FlatSigns signs) noexcept {
    if (in.peek('"')) {
        const auto s = in.string();
        if (!s) return false;
        m.value = *s;
        m.is_string = true;
        return true;
    }
    return in.integer(m, signs);
}

}  // namespace

std::optional<std::size_t> read_flat_object(std::string_view body, std::span<FlatMember> out,
                                            FlatSigns signs) noexcept {
    Cursor in(body);
    if (!in.take('{')) return std::nullopt;
    std::size_t n = 0;
    if (!in.take('}')) {
        do {
            if (n == out.size()) return std::nullopt;
            FlatMember& m = out[n++];
            const auto key = in.string();
            if (!key || !in.take(':')) return std::nullopt;
            m.key = *key;
            if (!read_value(in, m, signs)) return std::nullopt;
        } while (in.take(','));
        if (!in.take('}')) return std::nullopt;
    }
    if (!in.at_end()) return std::nullopt;
    return n;
}

}  // namespace ratelimitd::http
