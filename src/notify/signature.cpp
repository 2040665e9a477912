// HMAC-SHA256 by OpenSSL's one-shot HMAC(), hex-encoded.
#include "ratelimitd/notify/signature.hpp"

#include "ratelimitd/core/hex.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <span>

namespace ratelimitd::notify {

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
         message.size(), digest, &size);
    return to_hex(std::span<const unsigned char>(digest, size));
}

std::string signature_value(std::string_view secret, std::int64_t unix_seconds, std::string_view body) {
    const std::string t = std::to_string(unix_seconds);
    std::string signed_text;
    signed_text.reserve(t.size() + 1 + body.size());
    signed_text.append(t).append(".").append(body);
    return "t=" + t + ",v1=" + hmac_sha256_hex(secret, signed_text);
}

}  // namespace ratelimitd::notify
