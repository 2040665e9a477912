// envoyproxy/ratelimit's key and counting of one descriptor (its src/limiter/cache_key.go and
// src/utils/utilities.go, published): see erl_counter.hpp.
#include "ratelimitd/policy/erl_counter.hpp"

#include "ratelimitd/policy/rls_domain.hpp"

namespace ratelimitd::policy {

std::int64_t erl_window_start(RlsUnit unit, std::int64_t now_s) noexcept {
    const std::int64_t divider = unit_seconds(unit);
    return divider > 0 ? now_s / divider * divider : now_s;
}

std::string erl_key(std::string_view prefix, std::string_view domain, std::span<const RlsEntry> entries,
                    RlsUnit unit, std::int64_t now_s) {
    std::string key;
    std::size_t size = prefix.size() + domain.size() + 24;
    for (const auto& e : entries) size += e.key.size() + e.value.size() + 2;
    key.reserve(size);
    key.append(prefix).append(domain).push_back('_');
    for (const auto& e : entries) {
        key.append(e.key).push_back('_');
        key.append(e.value).push_back('_');
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
    p.long_ttl = true;
    p.expiration_jitter = jitter;
    return p;
}

}  // namespace ratelimitd::policy
