// RenderedAnswer: field lines appended as text, framed and copied out once.
#include "ratelimitd/http/rendered_answer.hpp"
#include "ratelimitd/http/crlf.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string_view>

namespace ratelimitd::http {

namespace {

// "HTTP/1.1 200 " : the status line up to its reason phrase.
constexpr std::size_t status_line_size = 13;
// The longest status line: its start, the longest reason phrase Beast knows, CRLF.
constexpr std::size_t status_line_room = status_line_size + 40 + 2;

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

RenderedAnswer::RenderedAnswer(bhttp::status status, unsigned version, bool keep_alive, std::size_t field_room)
    : status_(status), version_(version), keep_alive_(keep_alive) {
    const std::string_view reason(bhttp::obsolete_reason(status_));
    char line[status_line_room];
    char* at = write_status_line(status_, version_, line);
    const std::size_t reason_size = std::min(reason.size(), status_line_room - status_line_size - crlf.size());
    std::memcpy(at, reason.data(), reason_size);
    at += reason_size;
    std::memcpy(at, crlf.data(), crlf.size());
    at += crlf.size();
    head_.reserve(static_cast<std::size_t>(at - line) + field_room);
    // head_ is empty: an append does less than assign (std::string::_M_replace).
    head_.append(line, static_cast<std::size_t>(at - line));
}

void RenderedAnswer::add_field(std::string_view name, std::string_view value) {
    // One append of the whole line where it fits a small buffer (X-Request-Id, the usual case).
    char line[128];
    const std::size_t size = name.size() + 2 + value.size() + crlf.size();
    if (size > sizeof line) {
        head_.append(name);
        head_.append(": ");
        head_.append(value);
        head_.append(crlf);
        return;
    }
    std::memcpy(line, name.data(), name.size());
    std::memcpy(line + name.size(), ": ", 2);
    std::memcpy(line + name.size() + 2, value.data(), value.size());
    std::memcpy(line + size - crlf.size(), crlf.data(), crlf.size());
    head_.append(line, size);
}

void RenderedAnswer::render(std::string& out) const {
    // The framing lines and the empty line that ends the head: "Content-Length: N" CRLF,
    // Connection where HTTP needs it, CRLF.
    constexpr std::string_view content_length = "Content-Length: ";
    char framing[96];
    std::memcpy(framing, content_length.data(), content_length.size());
    char* at = std::to_chars(framing + content_length.size(), framing + 48, body_.size()).ptr;
    // As Beast's keep_alive(): HTTP/1.1 keeps connections unless told, 1.0 closes unless told.
    std::string_view connection = "\r\n\r\n";
    if (version_ >= 11 && !keep_alive_) connection = "\r\nConnection: close\r\n\r\n";
    if (version_ < 11 && keep_alive_) connection = "\r\nConnection: keep-alive\r\n\r\n";
    std::memcpy(at, connection.data(), connection.size());
    at += connection.size();
    const std::size_t framing_size = static_cast<std::size_t>(at - framing);
    // One growth of `out`, then three copies into it.
    const std::size_t start = out.size();
    out.resize(start + head_.size() + framing_size + body_.size());
    char* to = out.data() + start;
    std::memcpy(to, head_.data(), head_.size());
    to += head_.size();
    std::memcpy(to, framing, framing_size);
    to += framing_size;
    std::memcpy(to, body_.data(), body_.size());
}

}  // namespace ratelimitd::http
