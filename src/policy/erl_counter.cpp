// envoyproxy/ratelimit's key and counting of one descriptor (its src/limiter/cache_key.go and
// src/utils/utilities.go, published): see erl_counter.hpp.
#include "ratelimitd/policy/erl_counter.hpp"

#include "ratelimitd/core/hex.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <openssl/sha.h>

#include <algorithm>

namespace ratelimitd::policy {

std::int64_t erl_window_start(RlsUnit unit, std::int64_t now_s) noexcept {
    const std::int64_t divider = unit_seconds(unit);
    return divider > 0 ? now_s / divider * divider : now_s;
}

namespace {

/// "%h", the hex SHA-256 of the entries (each key and value length-prefixed, so no two lists
/// hash alike) and "_": what stands for entries too long to write out. It holds one '_', and
/// entries written out hold at least two ("key_value_"), so it is never the text of any.
std::string hashed_entries(std::span<const RlsEntry> entries) {
    std::string raw;
    for (const auto& e : entries) {
        raw.append(std::to_string(e.key.size())).append(":").append(e.key);
        raw.append(std::to_string(e.value.size())).append(":").append(e.value);
    }
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(raw.data()), raw.size(), digest);
    return "%h" + to_hex(std::span<const unsigned char>(digest)) + "_";
}

}  // namespace

std::string erl_key(std::string_view prefix, std::string_view domain, std::span<const RlsEntry> entries,
                    RlsUnit unit, std::int64_t now_s) {
    std::size_t entries_bytes = 0;
    for (const auto& e : entries) entries_bytes += e.key.size() + e.value.size() + 2;
    std::string key;
    key.reserve(prefix.size() + domain.size() + 24 + std::min(entries_bytes, max_erl_entries_bytes));
    key.append(prefix).append(domain).push_back('_');
    if (entries_bytes > max_erl_entries_bytes) {
        // A client-shaped descriptor (many entries, long values): one short key, so one call's
        // Redis work stays bounded whatever the message holds.
        key += hashed_entries(entries);
    } else {
        for (const auto& e : entries) {
            key.append(e.key).push_back('_');
            key.append(e.value).push_back('_');
        }
    }
    key.append(std::to_string(erl_window_start(unit, now_s)));
    return key;
}

Policy erl_policy(const Policy& base, std::uint32_t requests_per_unit, RlsUnit unit, std::chrono::seconds jitter) {
    Policy p;
    p.name = base.name;
    p.algorithm = Algorithm::erl_fixed_window;
    p.limit = requests_per_unit;
    p.burst = p.limit;
    p.window = std::chrono::seconds(unit_seconds(unit));
    p.on_store_error = base.on_store_error;
    p.shadow = base.shadow;
    // Its quota webhooks: the counter's thresholds are of requests_per_unit, claimed on its key.
    p.notify = base.notify;
    p.long_ttl = true;
    p.expiration_jitter = jitter;
    return p;
}

}  // namespace ratelimitd::policy
