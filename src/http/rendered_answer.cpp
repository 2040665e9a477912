// RenderedAnswer: field lines appended as text, framed and copied out once.
#include "ratelimitd/http/rendered_answer.hpp"
#include "ratelimitd/http/crlf.hpp"

#include <charconv>

namespace ratelimitd::http {

namespace {

void append_status_line(bhttp::status status, unsigned version, std::string& out) {
    const unsigned code = static_cast<unsigned>(status);
    const char line[] = {'H', 'T', 'T', 'P', '/', static_cast<char>('0' + version / 10 % 10), '.',
                         static_cast<char>('0' + version % 10), ' ', static_cast<char>('0' + code / 100 % 10),
                         static_cast<char>('0' + code / 10 % 10), static_cast<char>('0' + code % 10), ' '};
    out.append(line, sizeof line);
    out.append(std::string_view(bhttp::obsolete_reason(status)));
    out.append(crlf);
}

}  // namespace

void RenderedAnswer::add_field(std::string_view name, std::string_view value) {
    fields_.append(name);
    fields_.append(": ");
    fields_.append(value);
    fields_.append(crlf);
}

void RenderedAnswer::render(std::string& out) const {
    out.reserve(out.size() + 64 + fields_.size() + body_.size());
    append_status_line(status_, version_, out);
    out.append(fields_);
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, body_.size());
    out.append("Content-Length: ");
    out.append(digits, static_cast<std::size_t>(end - digits));
    out.append(crlf);
    // As Beast's keep_alive(): HTTP/1.1 keeps connections unless told, 1.0 closes unless told.
    if (version_ >= 11 && !keep_alive_) out.append("Connection: close\r\n");
    if (version_ < 11 && keep_alive_) out.append("Connection: keep-alive\r\n");
    out.append(crlf);
    out.append(body_);
}

}  // namespace ratelimitd::http
