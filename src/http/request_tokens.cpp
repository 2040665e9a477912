// X-Request-Id and bearer-token checks (moved from router.cpp and admin_endpoints.cpp as they were).
#include "ratelimitd/http/request_tokens.hpp"

#include <openssl/crypto.h>

namespace ratelimitd::http {

bool is_sane_request_id(std::string_view id) noexcept {
    if (id.empty() || id.size() > 128) return false;
    for (char c : id) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '-' || c == '_' || c == '.' || c == ':';
        if (!ok) return false;
    }
    return true;
}

bool bearer_matches(std::string_view authorization, std::string_view token) noexcept {
    // RFC 9110 §11.1: the scheme is case-insensitive; RFC 6750 §2.1: then 1*SP, then the token.
    constexpr std::string_view scheme = "bearer";
    if (authorization.size() <= scheme.size() || authorization[scheme.size()] != ' ') return false;
    for (std::size_t i = 0; i < scheme.size(); ++i) {
        const char c = authorization[i];
        if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != scheme[i]) return false;
    }
    const auto start = authorization.find_first_not_of(' ', scheme.size());
    const auto presented = start == std::string_view::npos ? std::string_view{} : authorization.substr(start);
    if (presented.size() != token.size()) return false;
    return CRYPTO_memcmp(presented.data(), token.data(), token.size()) == 0;
}

}  // namespace ratelimitd::http
