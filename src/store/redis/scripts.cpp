// The embedded scripts and their SHA1 digests.
#include "ratelimitd/store/redis/scripts.hpp"

#include "ratelimitd/core/hex.hpp"
#include "ratelimitd/store/redis/lua_sources.hpp"

#include <openssl/sha.h>

#include <stdexcept>

namespace ratelimitd::store::redis {

std::string sha1_hex(std::string_view text) {
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    return to_hex(std::span<const unsigned char>(digest));
}

const std::vector<Script>& scripts() {
    static const std::vector<Script> all = [] {
        std::vector<Script> v;
        for (const auto& src : lua_sources()) {
            v.push_back(Script{std::string(src.name), src.text, sha1_hex(src.text)});
        }
        return v;
    }();
    return all;
}

namespace {

const Script& script_named(std::string_view name) {
    for (const auto& s : scripts()) {
        if (s.name == name) return s;
    }
    // Every script has a file in lua/; a missing one is a build defect.
    throw std::logic_error("no embedded script lua/" + std::string(name) + ".lua");
}

}  // namespace

const Script& multi_script() { return script_named("multi"); }

const Script& batch_script() { return script_named("batch"); }

const Script& refund_script() { return script_named("refund"); }

const Script& script_for(policy::Algorithm a) { return script_named(policy::to_string(a)); }

std::vector<policy::Algorithm> all_algorithms() { return policy::all_algorithms(); }

}  // namespace ratelimitd::store::redis
