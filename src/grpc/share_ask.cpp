// share_key and share_ask: a reported bucket in the ledger's terms.
#include "ratelimitd/grpc/share_ask.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace ratelimitd::rls {

namespace {

/// A reported count taken up to the rule's limit: a report of more cannot change the share (the
/// window is spent either way), and the bound keeps every figure exact in the script's doubles
/// (an authorised Envoy may report UINT64_MAX; docs/rlqs.md, "Hostile reports").
std::uint64_t counted(std::uint64_t reported, const policy::RlqsRule& rule) {
    return std::min(reported, static_cast<std::uint64_t>(std::max<std::int64_t>(rule.limit, 0)));
}

}  // namespace

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
                           .allowed = counted(bucket.allowed, rule),
                           .denied = counted(bucket.denied, rule),
                           .elapsed = bucket.elapsed,
                           .limit = rule.limit,
                           .window = rule.window,
                           .ttl = rule.assignment_ttl,
                           .interval = rule.reporting_interval};
}

}  // namespace ratelimitd::rls
