// render_response: status line, field lines and body appended to one string.
#include "ratelimitd/http/response_buffer.hpp"
#include "ratelimitd/http/crlf.hpp"

#include <boost/beast/http/status.hpp>
#include <boost/beast/http/write.hpp>

#include <sstream>

namespace ratelimitd::http {

namespace {

std::size_t rendered_size(const Response& res) {
    std::size_t n = 32 + res.reason().size() + res.body().size();  // status line + empty line
    for (const auto& f : res.base()) n += f.name_string().size() + f.value().size() + 4;
    return n;
}

void append_status_line(const Response& res, std::string& out) {
    const unsigned version = res.version();
    const unsigned code = res.result_int();
    const char line[] = {'H', 'T', 'T', 'P', '/', static_cast<char>('0' + version / 10 % 10), '.',
                         static_cast<char>('0' + version % 10), ' ', static_cast<char>('0' + code / 100 % 10),
                         static_cast<char>('0' + code / 10 % 10), static_cast<char>('0' + code % 10), ' '};
    out.append(line, sizeof line);
    // As Beast: the message's own reason when it has one, else the standard phrase.
    const std::string_view reason = res.reason();
    const std::string_view shown = reason.empty() ? std::string_view(bhttp::obsolete_reason(res.result())) : reason;
    out.append(shown);
    out.append(crlf);
}

}  // namespace

void render_response(const Response& res, std::string& out) {
    if (res.chunked()) {
        std::ostringstream beast_rendered;
        beast_rendered << res;
        out.append(beast_rendered.str());
        return;
    }
    out.reserve(out.size() + rendered_size(res));
    append_status_line(res, out);
    for (const auto& f : res.base()) {
        out.append(f.name_string());
        out.append(": ");
        out.append(f.value());
        out.append(crlf);
    }
    out.append(crlf);
    out.append(res.body());
}

}  // namespace ratelimitd::http
