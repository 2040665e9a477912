// share_key and share_ask: a reported bucket in the ledger's terms.
#include "ratelimitd/grpc/share_ask.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace ratelimitd::rls {

std::string share_key(std::string_view domain, const policy::RlqsRule& rule, const policy::RlqsBucketId& id) {
    // FNV-1a over "text\0" of each part: the separators keep ("ab","c") from ("a","bc").
    std::uint64_t h = 14695981039346656037ULL;
    const auto mix = [&h](std::string_view text) {
        for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
        h = (h ^ 0U) * 1099511628211ULL;
    };
    mix(domain);
    mix(rule.name);
    for (const auto& [key, value] : id) {
        mix(key);
        mix(value);
    }
    return fmt::format("ratelimitd:rlqs:{{{:016x}}}", h);
}

store::ShareAsk share_ask(std::string_view domain, const policy::RlqsRule& rule, const ReportedBucket& bucket,
                          const std::string& envoy) {
    return store::ShareAsk{.key = share_key(domain, rule, bucket.id),
                           .envoy = envoy,
                           .allowed = bucket.allowed,
                           .denied = bucket.denied,
                           .elapsed = bucket.elapsed,
                           .limit = rule.limit,
                           .window = rule.window,
                           .ttl = rule.assignment_ttl,
                           .interval = rule.reporting_interval};
}

}  // namespace ratelimitd::rls
