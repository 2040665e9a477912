// The one percent-encoder and the one percent-decoder; see percent.hpp for their options.
#include "ratelimitd/core/percent.hpp"

#include "ratelimitd/core/hex.hpp"

namespace ratelimitd {

void percent_encode_into(std::string& out, std::string_view text, PercentKeeps keeps) {
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (keeps(c)) {
            out.push_back(ch);
        } else {
            out.push_back('%');
            append_hex(out, c, HexCase::upper);  // RFC 3986 §2.1 prefers upper case
        }
    }
}

std::string percent_encode(std::string_view text, PercentKeeps keeps) {
    std::string out;
    out.reserve(text.size());
    percent_encode_into(out, text, keeps);
    return out;
}

int hex_digit_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::optional<std::string> percent_decode(std::string_view text, PercentOptions options) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '+' && options.plus_is_space) {
            out += ' ';
            continue;
        }
        if (c != '%') {
            out += c;
            continue;
        }
        const int hi = i + 2 < text.size() ? hex_digit_value(text[i + 1]) : -1;
        const int lo = hi >= 0 ? hex_digit_value(text[i + 2]) : -1;
        if (lo >= 0) {
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else if (options.malformed == MalformedPercent::keep) {
            out += '%';
        } else {
            return std::nullopt;
        }
    }
    return out;
}

}  // namespace ratelimitd
