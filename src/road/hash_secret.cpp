// effective_hash_secret: the environment's key, else the file's, else one made per process.
#include "ratelimitd/road/hash_secret.hpp"

#include <openssl/rand.h>

#include <array>
#include <random>

namespace ratelimitd::road {

namespace {

std::string random_secret() {
    std::array<unsigned char, 32> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
        // OpenSSL's generator failed (no entropy source?): the kernel's is as good a key.
        std::random_device rd;
        for (auto& b : bytes) b = static_cast<unsigned char>(rd());
    }
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace

std::string_view effective_hash_secret(const std::optional<std::string>& env_secret, const policy::Registry& reg) {
    if (env_secret) return *env_secret;
    if (reg.hash_secret) return *reg.hash_secret;
    static const std::string per_process = random_secret();
    return per_process;
}

}  // namespace ratelimitd::road
