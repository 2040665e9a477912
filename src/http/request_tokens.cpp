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
    constexpr std::string_view scheme = "Bearer ";
    if (authorization.size() != scheme.size() + token.size()) return false;
    if (authorization.substr(0, scheme.size()) != scheme) return false;
    return CRYPTO_memcmp(authorization.data() + scheme.size(), token.data(), token.size()) == 0;
}

}  // namespace ratelimitd::http
