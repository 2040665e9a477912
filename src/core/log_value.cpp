// log_value(): free text as one quoted log field value.
#include "ratelimitd/core/log_value.hpp"

#include "ratelimitd/core/hex.hpp"

namespace ratelimitd {

std::string log_value(std::string_view text) {
    std::string out = "\"";
    for (char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += ch;
        } else if (c >= 0x20 && c < 0x7f) {
            out += ch;
        } else {
            out += "\\x";
            append_hex(out, c);
        }
    }
    out += '"';
    return out;
}

}  // namespace ratelimitd
