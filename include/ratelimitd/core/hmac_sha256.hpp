// HMAC-SHA-256 with the key's work done once: a hashed identity is computed on every
// /v1/auth call, always under the same secret.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace ratelimitd {

/// HMAC-SHA-256 (RFC 2104, FIPS 180-4) under one key. The constructor hashes the key's inner
/// and outer pad blocks once; each digest() starts from copies of those two states, so a call
/// costs two SHA-256 blocks for a short message, allocates nothing and takes no lock.
/// @par Thread Safety
/// digest() is const and touches only its own locals: one object may serve any thread.
class HmacSha256 {
public:
    using Digest = std::array<unsigned char, 32>;
    using State = std::array<std::uint32_t, 8>;

    /// Any length; a key longer than a block (64 bytes) is hashed first, as RFC 2104 says.
    explicit HmacSha256(std::string_view key);
    ~HmacSha256();  // wipes the key-derived states
    HmacSha256(const HmacSha256&) = default;
    HmacSha256& operator=(const HmacSha256&) = default;

    /// HMAC-SHA-256(key, message): the same 32 bytes as OpenSSL's HMAC(EVP_sha256(), ...).
    [[nodiscard]] Digest digest(std::string_view message) const noexcept;

private:
    State inner_{};  ///< SHA-256 state after the block key ^ ipad
    State outer_{};  ///< SHA-256 state after the block key ^ opad
};

}  // namespace ratelimitd
