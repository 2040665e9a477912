// escape_label_value (label_value.hpp).
#include "ratelimitd/core/label_value.hpp"

namespace ratelimitd {

std::string escape_label_value(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        if (c == '\\' || c == '"') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace ratelimitd
