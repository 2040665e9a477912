// html_escape: the five characters that could end a text node or an attribute value.
#include "ratelimitd/simulate/html_text.hpp"

namespace ratelimitd::simulate {

std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

}  // namespace ratelimitd::simulate
