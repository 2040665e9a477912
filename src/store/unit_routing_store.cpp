// UnitRoutingStore: each check to the store of its limit's unit (unit_routing_store.hpp).
#include "ratelimitd/store/unit_routing_store.hpp"

#include "ratelimitd/store/split_call.hpp"

#include <utility>

namespace ratelimitd::store {

namespace net = boost::asio;

bool counts_per_second(const policy::Policy& p) noexcept {
    return p.algorithm == policy::Algorithm::erl_fixed_window && p.window == std::chrono::seconds(1);
}

net::awaitable<result<check::Verdict>> UnitRoutingStore::apply(const policy::Policy& p, std::string key,
                                                               std::uint32_t cost) {
    co_return co_await of(p).apply(p, std::move(key), cost);
}

std::optional<result<check::Verdict>> UnitRoutingStore::try_apply_now(const policy::Policy& p,
                                                                      const std::string& key, std::uint32_t cost,
                                                                      std::chrono::steady_clock::time_point now) {
    return of(p).try_apply_now(p, key, cost, now);
}

net::awaitable<result<check::Verdict>> UnitRoutingStore::apply_all(std::vector<LimitCheck> checks) {
    SplitCall call;
    for (std::size_t i = 0; i < checks.size(); ++i) {
        call.part[counts_per_second(*checks[i].policy) ? 1 : 0].push_back(i);
    }
    // One store holds them all: its own call, atomic as it makes it.
    if (call.part[1].empty()) co_return co_await other_units_.apply_all(std::move(checks));
    if (call.part[0].empty()) co_return co_await per_second_.apply_all(std::move(checks));
    call.checks = std::move(checks);
    co_return co_await apply_split({&other_units_, &per_second_}, std::move(call));
}

net::awaitable<result<check::Verdict>> UnitRoutingStore::peek(const policy::Policy& p, std::string key) {
    co_return co_await of(p).peek(p, std::move(key));
}

net::awaitable<result<bool>> UnitRoutingStore::reset(std::string key) {
    auto other = co_await other_units_.reset(key);
    auto second = co_await per_second_.reset(std::move(key));
    if (!other) co_return other;
    if (!second) co_return second;
    co_return *other || *second;
}

net::awaitable<result<check::Verdict>> UnitRoutingStore::release(const policy::Policy& p, std::string key,
                                                                 std::string lease) {
    co_return co_await of(p).release(p, std::move(key), std::move(lease));
}

net::awaitable<bool> UnitRoutingStore::ready() {
    const bool other = co_await other_units_.ready();
    const bool second = co_await per_second_.ready();
    co_return other && second;
}

std::string UnitRoutingStore::describe() const {
    return other_units_.describe() + ", per-second limits on " + per_second_.describe();
}

}  // namespace ratelimitd::store
