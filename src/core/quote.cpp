// quote(): safe echo of untrusted text in messages.
#include "ratelimitd/core/quote.hpp"

#include "ratelimitd/core/hex.hpp"

namespace ratelimitd {

std::string quote(std::string_view text, std::size_t max_bytes) {
    std::string out = "\"";
    for (std::size_t i = 0; i < text.size() && i < max_bytes; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            out += static_cast<char>(c);
        } else {
            out += "\\x";
            append_hex(out, c);
        }
    }
    if (text.size() > max_bytes) out += "...";
    out += '"';
    return out;
}

}  // namespace ratelimitd
