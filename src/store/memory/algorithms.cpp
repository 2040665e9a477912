// The dispatch to each algorithm and the reply every script ends with.
#include "ratelimitd/store/memory/algorithms.hpp"
#include "ratelimitd/store/memory/algorithm_steps.hpp"

#include <algorithm>
#include <utility>

namespace ratelimitd::store::memory::detail {

check::Verdict to_verdict(const Policy& p, const Reply& r, std::int64_t now) {
    check::Verdict v;
    to_verdict_into(p, r, now, v);
    return v;
}

void to_verdict_into(const Policy& p, const Reply& r, std::int64_t now, check::Verdict& out) {
    out.allowed = r.allowed;
    out.windows.clear();
    check::WindowState& w = out.windows.emplace_back();
    w.policy = p.name;
    w.allowed = r.allowed;
    w.limit = p.limit;
    w.window_s = std::max<std::int64_t>(1, ceil_div(p.window.count(), 1000));
    w.remaining = std::max<std::int64_t>(0, r.remaining);  // a step may say how far past the limit
    w.past_limit = std::max<std::int64_t>(0, -r.remaining);
    w.reset_epoch_s = ceil_div(r.reset_ms, 1000);
    w.reset_after_s = ceil_div(r.reset_ms - now, 1000);
    w.reset_after_ms = r.reset_ms - now;
    w.retry_after_s = r.allowed ? 0 : std::max<std::int64_t>(1, w.reset_after_s);
    w.lease = r.lease;
    w.delay_ms = r.delay_ms;
}

Reply run_algorithm(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now) {
    const auto i = static_cast<std::size_t>(p.algorithm);
    return i < Steps::size ? Steps::checks[i](map, key, p, cost, now) : Reply{};
}

Reply run_reserve(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now) {
    switch (p.algorithm) {
    case Algorithm::token_bucket: return TokenBucket::reserve(map, key, p, cost, now, p.queue_units);
    case Algorithm::gcra: return Gcra::reserve(map, key, p, cost, now, p.queue_units);
    default: return run_algorithm(map, key, p, cost, now);  // the config loader lets no other delay
    }
}

Reply run_report(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now) {
    const auto i = static_cast<std::size_t>(p.algorithm);
    return i < Steps::size ? Steps::reports[i](map, key, p, cost, now) : Reply{};
}

}  // namespace ratelimitd::store::memory::detail
