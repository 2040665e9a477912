// HMAC-SHA256 from precomputed pad states (core/hmac_sha256), hex-encoded. A target's states
// are computed once, when the config is loaded; OpenSSL's one-shot HMAC() fetched the digest,
// built and freed its contexts and hashed both pad blocks again on every signature.
#include "ratelimitd/notify/signature.hpp"

#include "ratelimitd/core/hex.hpp"

#include <span>

namespace ratelimitd::notify {

namespace {

std::string digest_hex(const HmacSha256& key, std::string_view message) {
    const HmacSha256::Digest digest = key.digest(message);
    return to_hex(std::span<const unsigned char>(digest.data(), digest.size()));
}

}  // namespace

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
    return digest_hex(HmacSha256(key), message);
}

std::string signature_value(const HmacSha256& key, std::int64_t unix_seconds, std::string_view body) {
    const std::string t = std::to_string(unix_seconds);
    std::string signed_text;
    signed_text.reserve(t.size() + 1 + body.size());
    signed_text.append(t).append(".").append(body);
    return "t=" + t + ",v1=" + digest_hex(key, signed_text);
}

std::string signature_value(std::string_view secret, std::int64_t unix_seconds, std::string_view body) {
    return signature_value(HmacSha256(secret), unix_seconds, body);
}

std::string signature_value(const policy::NotifyTarget& target, std::int64_t unix_seconds, std::string_view body) {
    if (target.signer) return signature_value(*target.signer, unix_seconds, body);
    return signature_value(target.secret, unix_seconds, body);
}

}  // namespace ratelimitd::notify
