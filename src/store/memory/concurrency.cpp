// lua/concurrency.lua in C++: a sorted vector of leases stands for the sorted set.
#include "ratelimitd/store/memory/concurrency.hpp"

#include "ratelimitd/store/lease_id.hpp"
#include "ratelimitd/store/memory/algorithms.hpp"
#include "ratelimitd/store/memory/entry.hpp"

#include <algorithm>
#include <tuple>

namespace ratelimitd::store::memory::detail {
namespace {

bool before(const Lease& a, const Lease& b) { return std::tie(a.expiry, a.id) < std::tie(b.expiry, b.id); }

// The first live lease: live while now < expiry.
std::vector<Lease>::iterator first_live(ConcurrencyState& s, std::int64_t now) {
    return std::find_if(s.leases.begin(), s.leases.end(), [now](const Lease& l) { return l.expiry > now; });
}

// The script's ZREMRANGEBYSCORE -inf now, and the PEXPIREAT of the last lease (or the key's
// removal when none is left, as Redis drops an empty sorted set).
void trim_and_expire(Map& map, const Key& key, Entry& e, std::int64_t now) {
    auto& leases = std::get<ConcurrencyState>(e.state).leases;
    leases.erase(leases.begin(), first_live(std::get<ConcurrencyState>(e.state), now));
    if (leases.empty()) {
        map.erase(key);
        return;
    }
    e.expire_at = leases.back().expiry;
}

// The last lines of the script: remaining, and when a slot is free.
Reply state_of(const ConcurrencyState* s, const Policy& p, bool allowed, std::int64_t now) {
    const auto begin = s != nullptr ? std::find_if(s->leases.begin(), s->leases.end(),
                                                   [now](const Lease& l) { return l.expiry > now; })
                                    : std::vector<Lease>::const_iterator{};
    const std::int64_t held = s != nullptr ? s->leases.end() - begin : 0;
    Reply r;
    r.allowed = allowed;
    r.remaining = std::max<std::int64_t>(0, p.limit - held);
    r.reset_ms = now;
    if (r.remaining == 0 && held > 0) r.reset_ms = (begin + (held - p.limit))->expiry;
    return r;
}

}  // namespace

Reply Concurrency::report(Map& map, const Key& key, const Policy& p, std::int64_t, std::int64_t now) {
    Reply r = Concurrency::check(map, key, p, 0, now);  // a peek: nothing is charged
    r.allowed = true;
    return r;
}

Reply Concurrency::check(Map& map, const Key& key, const Policy& p, std::int64_t cost, std::int64_t now) {
    Entry* e = find_live(map, key, Algorithm::concurrency, now);
    if (e != nullptr && cost > 0) {
        trim_and_expire(map, key, *e, now);
        e = find_live(map, key, Algorithm::concurrency, now);
    }
    auto* s = e != nullptr ? &std::get<ConcurrencyState>(e->state) : nullptr;
    const auto held = s != nullptr ? s->leases.end() - first_live(*s, now) : 0;
    if (cost == 0 || held + cost > p.limit) return state_of(s, p, cost == 0 && held <= p.limit, now);

    if (e == nullptr) {
        e = &insert(map, key, Algorithm::concurrency);
        s = &std::get<ConcurrencyState>(e->state);
    }
    Lease lease{now + p.window.count(), new_lease_id()};
    s->leases.insert(std::upper_bound(s->leases.begin(), s->leases.end(), lease, before), lease);
    e->expire_at = s->leases.back().expiry;
    Reply r = state_of(s, p, true, now);
    r.lease = std::move(lease.id);
    return r;
}

Reply release_lease(Map& map, const Key& key, const Policy& p, const std::string& id, std::int64_t now) {
    Entry* e = find_live(map, key, Algorithm::concurrency, now);
    if (e == nullptr) return state_of(nullptr, p, false, now);
    auto& leases = std::get<ConcurrencyState>(e->state).leases;
    const auto it = std::find_if(first_live(std::get<ConcurrencyState>(e->state), now), leases.end(),
                                 [&id](const Lease& l) { return l.id == id; });
    const bool freed = it != leases.end();
    if (freed) leases.erase(it);
    trim_and_expire(map, key, *e, now);
    e = find_live(map, key, Algorithm::concurrency, now);
    return state_of(e != nullptr ? &std::get<ConcurrencyState>(e->state) : nullptr, p, freed, now);
}

}  // namespace ratelimitd::store::memory::detail
