// Fuzz target: the two request values the router compares or echoes: X-Request-Id (echoed
// only when it is a plain token, so it cannot inject into headers or logs) and the admin
// bearer token (Authorization: Bearer <token>, compared in constant time). Oracles: the
// request-id rule written out again; "Bearer <token>" matches, and nothing matches whose
// credential differs from the token by one byte (the scheme's case may be either way).
#include "ratelimitd/http/request_tokens.hpp"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

bool plain_token(std::string_view id) {
    if (id.empty() || id.size() > 128) return false;
    for (const unsigned char c : id) {
        if (c <= 0x20 || c >= 0x7f) return false;  // no control byte, space, CR/LF or obs-text
        if (std::string_view("-_.:").find(static_cast<char>(c)) == std::string_view::npos &&
            !std::isalnum(c)) {
            return false;
        }
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace ratelimitd::http;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (is_sane_request_id(text) != plain_token(text)) std::abort();

    // The input splits at its first NUL into an Authorization value and a token.
    const auto nul = text.find('\0');
    const std::string_view header = text.substr(0, nul);
    const std::string_view token = nul == std::string_view::npos ? std::string_view{} : text.substr(nul + 1);
    const bool matched = bearer_matches(header, token);
    // A token never starts with a space: the spaces after the scheme are 1*SP (RFC 6750 §2.1).
    const bool plain = !token.empty() && token.front() != ' ';
    if (plain && header == "Bearer " + std::string(token) && !matched) std::abort();
    if (matched) {
        const bool scheme = header.size() >= 7 && (header[0] | 0x20) == 'b' && (header[1] | 0x20) == 'e' &&
                            (header[2] | 0x20) == 'a' && (header[3] | 0x20) == 'r' &&
                            (header[4] | 0x20) == 'e' && (header[5] | 0x20) == 'r' && header[6] == ' ';
        const auto start = header.find_first_not_of(' ', 6);
        const std::string_view presented = start == std::string_view::npos ? std::string_view{} : header.substr(start);
        if (!scheme || presented != token) std::abort();
    }
    return 0;
}
