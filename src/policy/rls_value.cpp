// bounded_value: a long descriptor value as its prefix and its digest (rls_value.hpp).
#include "ratelimitd/policy/rls_value.hpp"

#include "ratelimitd/core/hex.hpp"

#include <openssl/sha.h>

#include <span>

namespace ratelimitd::policy {

std::string bounded_value(std::string_view value) {
    if (value.size() <= max_kept_value_bytes) return std::string(value);
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(value.data()), value.size(), digest);
    std::string out;
    out.reserve(bounded_value_bytes);
    out.append(value.substr(0, max_kept_value_bytes)).push_back('#');
    out += to_hex(std::span<const unsigned char>(digest));
    return out;
}

}  // namespace ratelimitd::policy
