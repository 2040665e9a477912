// RenderedAnswer: field lines appended as text, framed and copied out once.
#include "ratelimitd/http/rendered_answer.hpp"
#include "ratelimitd/http/crlf.hpp"

#include <charconv>
#include <cstring>
#include <string_view>

namespace ratelimitd::http {

namespace {

// "HTTP/1.1 200 " : the status line up to its reason phrase.
constexpr std::size_t status_line_size = 13;

char* write_status_line(bhttp::status status, unsigned version, char* at) noexcept {
    const unsigned code = static_cast<unsigned>(status);
    const char line[status_line_size] = {'H', 'T', 'T', 'P', '/', static_cast<char>('0' + version / 10 % 10), '.',
                                         static_cast<char>('0' + version % 10), ' ',
                                         static_cast<char>('0' + code / 100 % 10),
                                         static_cast<char>('0' + code / 10 % 10), static_cast<char>('0' + code % 10), ' '};
    std::memcpy(at, line, status_line_size);
    return at + status_line_size;
}

}  // namespace

void RenderedAnswer::add_field(std::string_view name, std::string_view value) {
    fields_.append(name);
    fields_.append(": ");
    fields_.append(value);
    fields_.append(crlf);
}

void RenderedAnswer::render(std::string& out) const {
    char length[24];
    const auto [end, ec] = std::to_chars(length, length + sizeof length, body_.size());
    // As Beast's keep_alive(): HTTP/1.1 keeps connections unless told, 1.0 closes unless told.
    std::string_view connection = "";  // not null: copied from below
    if (version_ >= 11 && !keep_alive_) connection = "Connection: close\r\n";
    if (version_ < 11 && keep_alive_) connection = "Connection: keep-alive\r\n";
    // One growth of `out`, then copies into it: its capacity is not checked per piece.
    const std::string_view reason(bhttp::obsolete_reason(status_));
    const std::string_view content_length = "Content-Length: ";
    const std::size_t start = out.size();
    out.resize(start + status_line_size + reason.size() + crlf.size() + fields_.size() + content_length.size() +
               static_cast<std::size_t>(end - length) + crlf.size() + connection.size() + crlf.size() + body_.size());
    char* at = write_status_line(status_, version_, out.data() + start);
    for (const std::string_view part : {reason, crlf, std::string_view(fields_), content_length,
                                        std::string_view(length, static_cast<std::size_t>(end - length)), crlf,
                                        connection, crlf, std::string_view(body_)}) {
        std::memcpy(at, part.data(), part.size());
        at += part.size();
    }
}

}  // namespace ratelimitd::http
