// X-Request-Id and bearer-token checks (moved from router.cpp and admin_endpoints.cpp as they were).
#include "ratelimitd/http/request_tokens.hpp"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <array>

namespace ratelimitd::http {

namespace {

std::array<unsigned char, SHA256_DIGEST_LENGTH> sha256_of(std::string_view text) noexcept {
    std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
    return digest;
}

}  // namespace

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
    // Compare digests, not the texts: both are 32 bytes whatever was presented, so neither
    // the comparison nor an early length check tells a caller how long the token is.
    const auto presented_digest = sha256_of(presented);
    const auto token_digest = sha256_of(token);
    return CRYPTO_memcmp(presented_digest.data(), token_digest.data(), presented_digest.size()) == 0;
}

}  // namespace ratelimitd::http
