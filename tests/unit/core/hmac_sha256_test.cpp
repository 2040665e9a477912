// HmacSha256 against RFC 4231's HMAC-SHA-256 vectors and against OpenSSL's one-shot HMAC(),
// the function it replaced, on random keys and messages of every length around the block.
#include "ratelimitd/core/hex.hpp"
#include "ratelimitd/core/hmac_sha256.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <random>
#include <string>

namespace ratelimitd {
namespace {

std::string hex_of(const HmacSha256::Digest& d) { return to_hex(std::span(d.data(), d.size())); }

std::string openssl_hmac(const std::string& key, const std::string& message) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    static const unsigned char no_key = 0;
    HMAC(EVP_sha256(), key.empty() ? static_cast<const void*>(&no_key) : key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &len);
    return to_hex(std::span(out, len));
}

TEST(HmacSha256, Rfc4231TestVectors) {
    struct Case {
        std::string key;
        std::string data;
        const char* mac;
    };
    std::string key4;
    for (char c = 1; c <= 25; ++c) key4.push_back(c);
    const std::string long_key(131, '\xaa');
    const Case cases[] = {
        {std::string(20, '\x0b'), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {"Jefe", "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {std::string(20, '\xaa'), std::string(50, '\xdd'),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
        {key4, std::string(50, '\xcd'), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
        {long_key, "Test Using Larger Than Block-Size Key - Hash Key First",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
        {long_key,
         "This is a test using a larger than block-size key and a larger than block-size data. The key needs to "
         "be hashed before being used by the HMAC algorithm.",
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
    };
    for (const auto& c : cases) EXPECT_EQ(hex_of(HmacSha256(c.key).digest(c.data)), c.mac) << c.data;
}

// Every message length 0..200 (one, two and three blocks of padding, the 55/56-byte edge) under
// keys of 0..130 bytes (empty, short, exactly a block, longer than a block).
TEST(HmacSha256, SameBytesAsOpenSslOnRandomKeysAndMessages) {
    std::mt19937 rng(20261206);
    std::uniform_int_distribution<int> byte(0, 255);
    auto random_bytes = [&](std::size_t n) {
        std::string s(n, '\0');
        for (char& c : s) c = static_cast<char>(byte(rng));
        return s;
    };
    int compared = 0;
    for (std::size_t key_len : {0, 1, 16, 32, 63, 64, 65, 130}) {
        const std::string key = random_bytes(key_len);
        const HmacSha256 keyed(key);
        for (std::size_t len = 0; len <= 200; ++len) {
            const std::string message = random_bytes(len);
            ASSERT_EQ(hex_of(keyed.digest(message)), openssl_hmac(key, message)) << key_len << "/" << len;
            ++compared;
        }
    }
    EXPECT_EQ(compared, 8 * 201);
}

TEST(HmacSha256, OneObjectGivesTheSameDigestOnEveryCallAndCopies) {
    const HmacSha256 keyed("a secret of at least sixteen bytes");
    const HmacSha256 copy = keyed;
    EXPECT_EQ(keyed.digest("sk_live_alice"), keyed.digest("sk_live_alice"));
    EXPECT_EQ(copy.digest("sk_live_alice"), keyed.digest("sk_live_alice"));
    EXPECT_NE(keyed.digest("sk_live_alice"), keyed.digest("sk_live_bob"));
}

}  // namespace
}  // namespace ratelimitd
