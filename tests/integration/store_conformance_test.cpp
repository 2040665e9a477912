// One conformance suite for every Store: the Redis scripts and the embedded store, run through the
// same Store interface, must give the same verdicts and the same numbers in every scenario.
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/core/clock.hpp"
#include "ratelimitd/store/backend_factory.hpp"
#include "ratelimitd/store/memory/memory_store.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/redis_store.hpp"
#include "ratelimitd/store/redis/scripts.hpp"
#include "support/held_window.hpp"
#include "support/processes.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace ratelimitd::test::store_conformance_test {
namespace {

namespace net = boost::asio;
using policy::Algorithm;
using policy::Policy;
using namespace std::chrono_literals;

// GCRA is the token bucket counted from the other end (the TAT is how far the bucket is from
// full), so every scenario expects the token bucket's numbers of it.
bool bucket_like(Algorithm a) { return a == Algorithm::token_bucket || a == Algorithm::gcra; }

enum class Kind { redis, embedded };

const char* to_string(Kind k) { return k == Kind::redis ? "redis" : "embedded"; }

// The stores under test come from the backends' list (store/backend_factory.cpp): each kind
// runs here through a Lane, or names the suite that covers it instead. A new backend with
// neither fails EveryBackendKindIsCovered.
std::optional<Kind> lane_of(std::string_view backend) {
    if (backend == "redis") return Kind::redis;  // redis:// and redis-sentinel://: one RedisStore
    if (backend == "embedded") return Kind::embedded;
    return std::nullopt;
}

// The same scripts, slot by slot, need a cluster of their own: cluster_test.cpp and
// cluster_layered_test.cpp run them on three primaries.
constexpr std::string_view covered_elsewhere[] = {"redis-cluster"};

// Every algorithm a config may name: erl_fixed_window (the Envoy planner's alone) charges past
// the limit by design, so the all-or-nothing rows below are not its own.
std::vector<Algorithm> configurable_algorithms() {
    auto all = store::redis::all_algorithms();
    std::erase_if(all, [](Algorithm a) { return !policy::traits(a).configurable; });
    return all;
}

std::vector<Kind> conformance_kinds() {
    std::vector<Kind> out;
    for (const store::BackendKind* backend : store::backend_kinds()) {
        const auto kind = lane_of(backend->name);
        if (kind && std::find(out.begin(), out.end(), *kind) == out.end()) out.push_back(*kind);
    }
    return out;
}

TEST(ConformanceStores, EveryBackendKindIsCovered) {
    for (const store::BackendKind* backend : store::backend_kinds()) {
        const bool elsewhere = std::find(std::begin(covered_elsewhere), std::end(covered_elsewhere), backend->name) !=
                               std::end(covered_elsewhere);
        EXPECT_TRUE(lane_of(backend->name) || elsewhere) << backend->name << " has no conformance lane";
    }
}

// The clock both stores read: Redis TIME and SystemClock are the same CLOCK_REALTIME, both
// truncated to milliseconds, so a call's [before, after] brackets the store's "now".
std::int64_t wall_ms() { return SystemClock{}.now_ms(); }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + ((a % b) > 0 ? 1 : 0); }

/// One check as the test saw it: the store's answer and wall-clock times around the call.
struct Observed {
    result<check::Verdict> verdict;
    std::int64_t before_ms = 0;
    std::int64_t after_ms = 0;

    const check::WindowState& window() const { return verdict->windows.at(0); }
};

std::string describe(const Observed& o) {
    if (!o.verdict) return "store error: " + o.verdict.error().detail;
    const auto& w = o.window();
    std::ostringstream s;
    s << "{allowed " << o.verdict->allowed << "/" << w.allowed << ", limit " << w.limit << ", remaining "
      << w.remaining << ", reset " << w.reset_epoch_s << ", reset_after " << w.reset_after_s << "s/"
      << w.reset_after_ms << "ms, retry_after " << w.retry_after_s << ", at " << o.before_ms << ".."
      << o.after_ms << "}";
    return s.str();
}

/// What one server thread of the app has: an io_context and the Store it uses. For Redis a
/// RedisStore of its own (the store is per thread); for the embedded store the one shared
/// MemoryStore. Build, use and destroy a Lane on one thread.
class Lane {
public:
    Lane(Kind kind, const RedisServer* redis, store::memory::MemoryStore* memory, const std::string& id) {
        if (kind == Kind::embedded) {
            store_ = memory;
            return;
        }
        auto endpoint = store::redis::parse_redis_url(redis->url());
        if (!endpoint) throw std::runtime_error(endpoint.error().detail);
        // A generous timeout: this suite is about numbers, not deadlines (faults_test is).
        redis_ = std::make_unique<store::redis::RedisStore>(ioc_.get_executor(), *endpoint, 5s,
                                                            "conformance." + id);
        store_ = redis_.get();
        if (!run_until([this] { return redis_->any_ready(); }, 10s)) {
            throw std::runtime_error("RedisStore did not connect to " + redis->url());
        }
    }

    ~Lane() {
        if (redis_) redis_->stop();
        work_.reset();
        ioc_.poll();     // lets failed commands and coroutines finish while the store exists
        redis_.reset();  // frees the hiredis contexts while the io_context still exists
    }

    Lane(const Lane&) = delete;
    Lane& operator=(const Lane&) = delete;

    /// `cost` units on each of `keys`, every check started before any is answered (many
    /// coroutines at once, as concurrent requests on one server thread).
    std::vector<Observed> apply_concurrently(const Policy& p, const std::vector<std::string>& keys,
                                             std::uint32_t cost) {
        // Shared with the coroutines, which may outlive this call when it throws.
        struct State {
            Policy policy;
            std::vector<std::optional<Observed>> out;
            std::size_t done = 0;
        };
        auto state = std::make_shared<State>(State{p, std::vector<std::optional<Observed>>(keys.size()), 0});
        for (std::size_t i = 0; i < keys.size(); ++i) {
            net::co_spawn(
                ioc_,
                [this, state, i, key = keys[i], cost]() -> net::awaitable<void> {
                    const std::int64_t before = wall_ms();
                    auto verdict = co_await store_->apply(state->policy, key, cost);
                    state->out[i].emplace(Observed{std::move(verdict), before, wall_ms()});
                    ++state->done;
                },
                net::detached);
        }
        if (!run_until([&] { return state->done == keys.size(); }, 30s)) {
            throw std::runtime_error("the store answered " + std::to_string(state->done) + " of " +
                                     std::to_string(keys.size()) + " checks within 30 s");
        }
        std::vector<Observed> out;
        for (auto& o : state->out) out.push_back(std::move(*o));
        return out;
    }

    Observed apply(const Policy& p, const std::string& key, std::uint32_t cost) {
        return std::move(apply_concurrently(p, {key}, cost).front());
    }

    /// One layered check (Redis: lua/multi.lua) of every limit in `checks`.
    Observed apply_all(std::vector<store::LimitCheck> checks) {
        std::optional<Observed> out;
        net::co_spawn(
            ioc_,
            [this, &out, checks = std::move(checks)]() mutable -> net::awaitable<void> {
                const std::int64_t before = wall_ms();
                auto verdict = co_await store_->apply_all(std::move(checks));
                out.emplace(Observed{std::move(verdict), before, wall_ms()});
            },
            net::detached);
        if (!run_until([&] { return out.has_value(); }, 30s)) throw std::runtime_error("no layered answer in 30 s");
        return std::move(*out);
    }

    /// Store::release of `lease` (concurrency); allowed = a live lease was freed.
    Observed release(const Policy& p, const std::string& key, const std::string& lease) {
        std::optional<Observed> out;
        net::co_spawn(
            ioc_,
            [&]() -> net::awaitable<void> {
                const std::int64_t before = wall_ms();
                auto verdict = co_await store_->release(p, key, lease);
                out.emplace(Observed{std::move(verdict), before, wall_ms()});
            },
            net::detached);
        if (!run_until([&] { return out.has_value(); }, 30s)) throw std::runtime_error("no release answer in 30 s");
        return std::move(*out);
    }

private:
    // Runs handlers until `done()`; waiting on the io_context, not sleeping.
    template <class Done>
    bool run_until(Done done, std::chrono::milliseconds timeout) {
        const auto until = std::chrono::steady_clock::now() + timeout;
        while (!done()) {
            if (std::chrono::steady_clock::now() >= until) return false;
            ioc_.run_one_until(until);
        }
        return true;
    }

    net::io_context ioc_{1};
    std::optional<net::executor_work_guard<net::io_context::executor_type>> work_{ioc_.get_executor()};
    std::unique_ptr<store::redis::RedisStore> redis_;
    store::Store* store_ = nullptr;
};

class Conformance : public ::testing::TestWithParam<std::tuple<Kind, Algorithm>> {
protected:
    Kind kind() const { return std::get<0>(GetParam()); }
    Algorithm algorithm() const { return std::get<1>(GetParam()); }

    // The server must die with the suite: a leaked RedisServer leaves redis-server running.
    static void TearDownTestSuite() {
        delete redis_;
        redis_ = nullptr;
    }

    void SetUp() override {
        if (kind() == Kind::redis) {
            // One redis-server per test process (ctest runs each test in its own), emptied per
            // test so that the key check in TearDown sees only this scenario's keys.
            if (redis_ == nullptr) redis_ = new RedisServer();
            ASSERT_EQ(redis_->command({"FLUSHALL"}), "OK");
        }
        lane_ = std::make_unique<Lane>(kind(), redis_, &memory_, "main");
    }

    void TearDown() override {
        lane_.reset();
        if (kind() == Kind::redis && redis_ != nullptr && !IsSkipped()) expect_every_key_expires();
    }

    /// A policy of this test's algorithm; burst = limit for the token bucket and GCRA.
    Policy policy(std::int64_t limit, std::chrono::milliseconds window) const {
        Policy p;
        p.name = std::string("conf-") + policy::to_string(algorithm());
        p.algorithm = algorithm();
        p.limit = limit;
        p.window = window;
        p.burst = limit;
        return p;
    }

    /// The key of `tenant` under `p`, remembered with the longest TTL its state may need.
    std::string key(const Policy& p, const std::string& tenant, const std::string& scope = "global") {
        std::string k = policy::make_key("rl", p.name, tenant, scope);
        // Token bucket and GCRA: until the bucket is full again / the TAT is past (burst / limit
        // windows); sliding window counter: to the end of the window after the current one
        // (two windows); the others: one window (README "Keys").
        const std::int64_t w = p.window.count();
        max_ttl_ms_[k] = bucket_like(p.algorithm)                       ? ceil_div(p.burst * w, p.limit)
                         : p.algorithm == Algorithm::sliding_window ? 2 * w
                                                                    : w;
        return k;
    }

    Observed check(const Policy& p, const std::string& k, std::uint32_t cost) {
        Observed o = lane_->apply(p, k, cost);
        if (!o.verdict) throw std::runtime_error(describe(o));
        return o;
    }

    // docs/configuration.md: every key the service writes has a TTL no longer than its state needs. Read
    // in one script, so no key can expire between listing it and asking its PTTL.
    void expect_every_key_expires() const {
        const std::string text = redis_->command(
            {"EVAL",
             "local r = {} for _, k in ipairs(redis.call('KEYS', '*')) do "
             "r[#r + 1] = k r[#r + 1] = redis.call('PTTL', k) end return r",
             "0"});
        ASSERT_EQ(text.rfind("(error)", 0), std::string::npos) << text;
        std::istringstream reply(text);
        std::string k;
        long long pttl = 0;
        int keys = 0;
        while (reply >> k >> pttl) {
            ++keys;
            const auto it = max_ttl_ms_.find(k);
            if (it == max_ttl_ms_.end()) {
                ADD_FAILURE() << "a key this scenario never checked: " << k;
                continue;
            }
            // Scenarios end with a write, so no key is at its last millisecond (PTTL 0).
            EXPECT_GT(pttl, 0) << k << " has no TTL (-1) or is expiring (0)";
            EXPECT_LE(pttl, it->second) << k << " outlives its state";
        }
        EXPECT_TRUE(reply.eof()) << "unparsed: " << text;
        EXPECT_GT(keys, 0) << "every scenario admits something, so Redis must hold keys";
    }

    static RedisServer* redis_;
    SystemClock clock_;
    store::memory::MemoryStore memory_{clock_};
    std::unique_ptr<Lane> lane_;
    std::map<std::string, std::int64_t> max_ttl_ms_;
};
RedisServer* Conformance::redis_ = nullptr;

// ---- exact admission under concurrency -------------------------------------------------------

// Each admitted check saw a different `remaining`, 0..limit-1: the checks of one key were
// decided one at a time, as Redis runs one script at a time.
void expect_exactly_admitted(const std::vector<Observed>& all, std::int64_t limit) {
    std::multiset<std::int64_t> remaining;
    for (const auto& o : all) {
        ASSERT_TRUE(o.verdict.has_value()) << describe(o);
        const auto& w = o.window();
        EXPECT_EQ(o.verdict->allowed, w.allowed);
        EXPECT_EQ(w.limit, limit);
        if (w.allowed) {
            remaining.insert(w.remaining);
            EXPECT_EQ(w.retry_after_s, 0) << describe(o);
        } else {
            EXPECT_EQ(w.remaining, 0) << describe(o);
            EXPECT_GE(w.retry_after_s, 1) << describe(o);
        }
    }
    EXPECT_EQ(static_cast<std::int64_t>(remaining.size()), limit) << "admitted";
    std::multiset<std::int64_t> want;
    for (std::int64_t r = 0; r < limit; ++r) want.insert(r);
    EXPECT_EQ(remaining, want) << "each admitted check must see its own remaining";
}

TEST_P(Conformance, ExactAdmissionUnderConcurrencyOnOneThread) {
    // 600 s: the token bucket refills one token per 30 s, so nothing refills mid-test.
    const Policy p = policy(20, 600s);
    const std::string hot = key(p, "hot");
    const auto all = lane_->apply_concurrently(p, std::vector<std::string>(60, hot), 1);
    expect_exactly_admitted(all, 20);
    EXPECT_FALSE(check(p, hot, 1).verdict->allowed);
}

TEST_P(Conformance, ExactAdmissionUnderConcurrencyFromThreads) {
    // Three server threads, as the app runs them: for Redis each with its own RedisStore,
    // for the embedded store all on the one MemoryStore. Each thread starts 40 checks at
    // once, alternating between two keys: 60 checks race on each key against limit 20.
    const Policy p = policy(20, 600s);
    const std::vector<std::string> keys{key(p, "hot-a"), key(p, "hot-b")};
    constexpr int threads = 3;
    std::latch all_ready(threads);
    std::mutex mutex;
    std::map<std::string, std::vector<Observed>> per_key;
    std::vector<std::string> failures;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            bool arrived = false;
            try {
                Lane lane(kind(), redis_, &memory_, "thread" + std::to_string(t));
                std::vector<std::string> mine;
                for (int i = 0; i < 40; ++i) mine.push_back(keys[static_cast<std::size_t>(i + t) % 2]);
                arrived = true;
                all_ready.arrive_and_wait();  // every lane connected: now race
                auto out = lane.apply_concurrently(p, mine, 1);
                std::lock_guard lock(mutex);
                for (std::size_t i = 0; i < out.size(); ++i) per_key[mine[i]].push_back(std::move(out[i]));
            } catch (const std::exception& e) {
                if (!arrived) all_ready.count_down();  // never leave the others waiting
                std::lock_guard lock(mutex);
                failures.push_back(e.what());
            }
        });
    }
    for (auto& th : pool) th.join();
    ASSERT_TRUE(failures.empty()) << failures.front();
    for (const auto& k : keys) {
        SCOPED_TRACE(k);
        ASSERT_EQ(per_key[k].size(), 60u);
        expect_exactly_admitted(per_key[k], 20);
        const Observed after = check(p, k, 1);
        EXPECT_FALSE(after.verdict->allowed) << describe(after);
    }
}

// ---- isolation -------------------------------------------------------------------------------

TEST_P(Conformance, KeysNeverShareState) {
    if (algorithm() == Algorithm::concurrency) GTEST_SKIP() << "a lease is one slot: costs above 1 are refused";
    const Policy p = policy(3, 600s);
    const std::string a = key(p, "tenant_1");
    ASSERT_TRUE(check(p, a, 3).verdict->allowed);
    ASSERT_FALSE(check(p, a, 1).verdict->allowed);
    // Keys that differ in the tenant (one a prefix of the other), or only in the scope, or in
    // a tenant holding ':' start full.
    for (const std::string& other : {key(p, "tenant_10"), key(p, "tenant_1", "other"), key(p, "ip:2001:db8::1")}) {
        const Observed o = check(p, other, 1);
        EXPECT_TRUE(o.verdict->allowed) << other << " " << describe(o);
        EXPECT_EQ(o.window().remaining, 2) << other;
    }
    const Observed again = check(p, a, 1);
    EXPECT_FALSE(again.verdict->allowed) << describe(again);
    EXPECT_EQ(again.window().remaining, 0);
}

// ---- cost ------------------------------------------------------------------------------------

TEST_P(Conformance, CostSpendsThatManyUnitsAndACostThatDoesNotFitChargesNothing) {
    if (algorithm() == Algorithm::concurrency) GTEST_SKIP() << "a lease is one slot: costs above 1 are refused";
    const Policy p = policy(10, 600s);  // token bucket: one token back per 60 s
    const std::string k = key(p, "spender");
    const std::pair<std::uint32_t, std::pair<bool, std::int64_t>> steps[] = {
        {4, {true, 6}},    // spends 4
        {7, {false, 6}},   // 7 > 6: denied, charges nothing
        {6, {true, 0}},    // exactly what is left
        {1, {false, 0}},
        {10, {false, 0}},
    };
    for (const auto& [cost, want] : steps) {
        const Observed o = check(p, k, cost);
        EXPECT_EQ(o.verdict->allowed, want.first) << "cost " << cost << " " << describe(o);
        EXPECT_EQ(o.window().remaining, want.second) << "cost " << cost << " " << describe(o);
        EXPECT_EQ(o.window().limit, 10);
    }
    // A cost of the whole limit on a fresh key is admitted and leaves nothing.
    const Observed whole = check(p, key(p, "whole"), 10);
    EXPECT_TRUE(whole.verdict->allowed) << describe(whole);
    EXPECT_EQ(whole.window().remaining, 0);
}

// ---- the numbers after a sequence of checks --------------------------------------------------

// One check of the sequence and what every store must answer. The reset is an absolute time:
// `reset_in_ms` after the store's "now" of step `anchor` (token bucket and fixed window: the
// first check; sliding log: the check that wrote the entry the reset waits for).
struct Step {
    std::uint32_t cost;
    bool allowed;
    std::int64_t remaining;
    std::int64_t reset_in_ms;
    std::size_t anchor;
};

// Limit 4 per 20 s (token bucket: burst 4, so 1 token = 20000 units, refilled 4 units per ms:
// one token per 5000 ms). Worked out from lua/*.lua; the same costs for every algorithm.
std::vector<Step> expected_sequence(Algorithm a) {
    switch (a) {
        case Algorithm::erl_fixed_window:
            // Not a conformance row (configurable_algorithms): it charges past the limit by
            // design; tests/grpc/grpc_erl_keys_test.cpp holds it on both stores.
            return {};
        case Algorithm::token_bucket:
        case Algorithm::gcra:
            // level 80000 -1-> 60000 -2-> 20000 (1 token) -2 denied- -1-> 0; each reset is
            // when the next (or, denied, the `cost`-th) token is back, counted from the first
            // check because refill since then moves `now` and the missing level alike.
            return {{1, true, 3, 5'000, 0},   {2, true, 1, 5'000, 0},   {2, false, 1, 5'000, 0},
                    {1, true, 0, 5'000, 0},   {1, false, 0, 5'000, 0},  {3, false, 0, 15'000, 0},
                    {4, false, 0, 20'000, 0}};
        case Algorithm::sliding_log:
            // log {t0}, {t0, t1, t1}, denied nth 1 -> t0, {t0, t1, t1, t3}, denied nth 1 -> t0;
            // cost 3 denied: nth = 4 + 3 - 4 = 3 -> the second unit of t1; cost 4: nth 4 -> t3.
            return {{1, true, 3, 20'000, 0},  {2, true, 1, 20'000, 0},  {2, false, 1, 20'000, 0},
                    {1, true, 0, 20'000, 0},  {1, false, 0, 20'000, 0}, {3, false, 0, 20'000, 1},
                    {4, false, 0, 20'000, 3}};
        case Algorithm::fixed_window:
            // one window opened by the first check: reset = its end for every check
            return {{1, true, 3, 20'000, 0},  {2, true, 1, 20'000, 0},  {2, false, 1, 20'000, 0},
                    {1, true, 0, 20'000, 0},  {1, false, 0, 20'000, 0}, {3, false, 0, 20'000, 0},
                    {4, false, 0, 20'000, 0}};
        case Algorithm::sliding_window:
            // One window opened by the first check, nothing before it (p = 0): the counts are
            // the fixed window's. A unit comes back only as the current count c fades through
            // the next window, c * (20000 - e) <= (4 - want) * 20000 at e ms into it:
            // c 1, want 4 -> e 20000; c 3, want 2 -> 6667; c 4, want 1 -> 5000; want 3 ->
            // 15000; want 4 -> 20000 (then nothing of it is left).
            return {{1, true, 3, 40'000, 0},  {2, true, 1, 26'667, 0},  {2, false, 1, 26'667, 0},
                    {1, true, 0, 25'000, 0},  {1, false, 0, 25'000, 0}, {3, false, 0, 35'000, 0},
                    {4, false, 0, 40'000, 0}};
        case Algorithm::concurrency:
            // Leases of 20 s, cost 1 each (a lease is one slot): a slot is free now while one
            // is; once all 4 are held, one comes back when the first lease expires.
            return {{1, true, 3, 0, 0},       {1, true, 2, 0, 1},       {1, true, 1, 0, 2},
                    {1, true, 0, 20'000, 0},  {1, false, 0, 20'000, 0}, {1, false, 0, 20'000, 0}};
    }
    return {};
}

TEST_P(Conformance, NumbersAfterASequenceOfChecks) {
    const Policy p = policy(4, 20s);
    const std::string k = key(p, "sequence");
    const auto steps = expected_sequence(algorithm());
    std::vector<Observed> seen;
    for (const Step& s : steps) seen.push_back(check(p, k, s.cost));
    // The expectations hold while no token refills (5000 ms) and no window ends (20 s).
    ASSERT_LT(seen.back().after_ms - seen.front().before_ms, 4'000) << "the sequence ran too slowly to judge";

    for (std::size_t i = 0; i < steps.size(); ++i) {
        const Step& s = steps[i];
        const Observed& o = seen[i];
        const auto& w = o.window();
        SCOPED_TRACE("step " + std::to_string(i) + " cost " + std::to_string(s.cost) + ": " + describe(o));
        // Exact.
        EXPECT_EQ(o.verdict->allowed, s.allowed);
        EXPECT_EQ(w.allowed, s.allowed);
        EXPECT_EQ(w.policy, p.name);
        EXPECT_EQ(w.limit, 4);
        EXPECT_EQ(w.window_s, 20);
        EXPECT_EQ(w.remaining, s.remaining);
        // The reset in ms lies in the anchor step's bracket plus reset_in_ms. 1 ms of slack
        // below: the fixed-window script reads TIME, then PTTL a few microseconds later, and
        // that can straddle a millisecond (the reset then reads 1 ms early).
        const std::int64_t lo = seen[s.anchor].before_ms + s.reset_in_ms - 1;
        const std::int64_t hi = seen[s.anchor].after_ms + s.reset_in_ms;
        EXPECT_GE(w.reset_epoch_s, ceil_div(lo, 1000));
        EXPECT_LE(w.reset_epoch_s, ceil_div(hi, 1000));
        // reset_after = reset - now, with now inside this step's own bracket.
        EXPECT_GE(w.reset_after_ms, lo - o.after_ms);
        EXPECT_LE(w.reset_after_ms, hi - o.before_ms);
        // A sequence well under a second (and the sliding window's 667 ms past the second
        // more than it lasts): one possible value each.
        EXPECT_EQ(w.reset_after_s, ceil_div(w.reset_after_ms, 1000));
        EXPECT_EQ(w.reset_after_s, ceil_div(s.reset_in_ms, 1000));
        EXPECT_EQ(w.retry_after_s, s.allowed ? 0 : std::max<std::int64_t>(1, w.reset_after_s));
    }
}

// ---- layered limits --------------------------------------------------------------------------

TEST_P(Conformance, LayeredLimitsChargeAllOrNothing) {
    if (algorithm() == Algorithm::concurrency) GTEST_SKIP() << "a lease is one slot: costs above 1 are refused";
    // Two limits of this algorithm decided as one (Redis: lua/multi.lua, whose phase 1 relies
    // on "the peek's remaining >= cost exactly when the real check admits"). The small limit
    // denies the third unit, so the large one must not be charged for it.
    const Policy small = policy(2, 600s);
    Policy large = policy(5, 600s);
    large.name += "-large";
    const std::string ks = key(small, "layered");
    const std::string kl = key(large, "layered");
    const auto both = [&](std::uint32_t cost) {
        std::vector<store::LimitCheck> checks;
        checks.push_back(store::LimitCheck{&small, ks, cost});
        checks.push_back(store::LimitCheck{&large, kl, cost});
        Observed o = lane_->apply_all(std::move(checks));
        if (!o.verdict) throw std::runtime_error(describe(o));
        return o;
    };
    const Observed first = both(2);
    ASSERT_TRUE(first.verdict->allowed) << describe(first);
    ASSERT_EQ(first.verdict->windows.size(), 2u);
    EXPECT_EQ(first.verdict->windows[0].remaining, 0);
    EXPECT_EQ(first.verdict->windows[1].remaining, 3);
    for (int i = 0; i < 3; ++i) {
        const Observed denied = both(1);
        EXPECT_FALSE(denied.verdict->allowed) << describe(denied);
        EXPECT_FALSE(denied.verdict->windows[0].allowed);
        EXPECT_EQ(denied.verdict->windows[1].remaining, 3) << "the large limit was charged";
    }
    // The large limit alone still holds exactly 3.
    EXPECT_TRUE(check(large, kl, 3).verdict->allowed);
    EXPECT_FALSE(check(large, kl, 1).verdict->allowed);
}

// ---- a denied check changes nothing ----------------------------------------------------------

TEST_P(Conformance, DeniedChecksChangeNothing) {
    if (algorithm() == Algorithm::concurrency) GTEST_SKIP() << "a lease is one slot: costs above 1 are refused";
    // Two keys with the same history, except that `a` is denied again and again meanwhile. A
    // denial that charged, extended the window or restarted the token refill would leave `a`
    // behind `b`.
    const Policy p = policy(2, 1'000ms);  // token bucket, GCRA: one unit per 500 ms
    // Each step holds only while its checks reach the store within the margin it relies on: a
    // loaded machine that delayed one past it tries new keys (until_held).
    until_held([&](int n) {
        bool in_time = true;
        [&] {
            const std::string a = key(p, "denied-often-" + std::to_string(n));
            const std::string b = key(p, "never-denied-" + std::to_string(n));
            const Observed a0 = check(p, a, 2);
            const Observed b0 = check(p, b, 2);
            ASSERT_TRUE(a0.verdict->allowed && b0.verdict->allowed);
            const std::int64_t first_window_end = a0.before_ms + 1'000;  // b opened after a
            const auto at = [&](std::int64_t offset_ms) {
                std::this_thread::sleep_until(std::chrono::system_clock::time_point(
                    std::chrono::milliseconds(std::max(a0.after_ms, b0.after_ms) + offset_ms)));
            };
            // The pair's checks; in time when a's answered before `a_by` and b's before `b_by`.
            const auto expect_same = [&](std::uint32_t cost, bool allowed, std::int64_t a_by, std::int64_t b_by) {
                const Observed oa = check(p, a, cost);
                const Observed ob = check(p, b, cost);
                in_time = in_time && oa.after_ms < a_by && ob.after_ms < b_by;
                SCOPED_TRACE("cost " + std::to_string(cost) + ": " + describe(oa) + " vs " + describe(ob));
                EXPECT_EQ(oa.verdict->allowed, allowed);
                EXPECT_EQ(ob.verdict->allowed, allowed);
                EXPECT_EQ(oa.window().remaining, ob.window().remaining);
                EXPECT_EQ(oa.window().reset_after_s, ob.window().reset_after_s);
                EXPECT_EQ(oa.window().retry_after_s, ob.window().retry_after_s);
                return std::pair{oa, ob};
            };
            // Cost 2 stays denied for the whole window (token bucket: 2 tokens need 1000 ms).
            int denials = 0;
            while (wall_ms() < a0.before_ms + 700) {
                const Observed o = check(p, a, 2);
                in_time = in_time && o.after_ms < first_window_end;
                ASSERT_FALSE(o.verdict->allowed) << describe(o);
                ++denials;
                std::this_thread::sleep_for(50ms);  // real time must pass: the stores read a real clock
            }
            ASSERT_GE(denials, 5);
            // Mid-window: 1.5 tokens are back for both (had the denials restarted the refill, `a`
            // would hold a tenth of one); the others are still full for both.
            at(750);
            expect_same(1, bucket_like(algorithm()), first_window_end, first_window_end);
            // Once the state of `b` is gone (token bucket: refilled 750 ms after its last admit;
            // sliding window counter: the next window has passed too; the others: the window
            // has passed; + 1 for the expiry ms), `a` is just as fresh; denied again for 500 ms.
            at(bucket_like(algorithm())                        ? 1'550
               : algorithm() == Algorithm::sliding_window ? 2'050
                                                          : 1'050);
            const auto [a2, b2] = expect_same(2, true, INT64_MAX, INT64_MAX);
            expect_same(1, false, a2.before_ms + 500, b2.before_ms + 500);
        }();
        return in_time;
    });
}

// ---- reset after Retry-After -----------------------------------------------------------------

TEST_P(Conformance, ACheckPassesExactlyRetryAfterSecondsAfterADenial) {
    if (algorithm() == Algorithm::concurrency) GTEST_SKIP() << "a lease is one slot: costs above 1 are refused";
    // 1.5 s, not 2 s: with a whole-second TTL a caller that waits exactly Retry-After can land
    // on a fixed-window key's expiry millisecond, when Redis still holds the full counter
    // (keys expire when now > expire_at). That 1 ms is pinned by memory_store_test.cpp.
    const Policy p = policy(2, 1'500ms);  // token bucket: one token per 750 ms
    // The check shortly before the reset says something only when the store answered it before
    // the reset: a loaded machine that delayed it past the reset tries a new key.
    until_held([&](int n) {
        const std::string k = key(p, "waiter-" + std::to_string(n));
        bool in_time = true;  // an attempt that failed before the early check holds
        [&] {
            ASSERT_TRUE(check(p, k, 2).verdict->allowed);
            const Observed denied = check(p, k, 1);
            ASSERT_FALSE(denied.verdict->allowed) << describe(denied);
            const auto& w = denied.window();
            // token bucket, GCRA: the next unit in 750 ms; sliding window counter: 2 * (1500 - e) <=
            // 1 * 1500 at e = 750 ms into the next window, 2250 ms away; the others: the window's end,
            // 1500 ms away.
            EXPECT_EQ(w.retry_after_s, bucket_like(algorithm())                        ? 1
                                       : algorithm() == Algorithm::sliding_window ? 3
                                                                                  : 2)
                << describe(denied);

            // Shortly before the reset the check is still denied: Retry-After is not a guess.
            std::this_thread::sleep_until(std::chrono::system_clock::time_point(
                std::chrono::milliseconds(denied.before_ms + w.reset_after_ms - 250)));
            const Observed early = check(p, k, 1);
            in_time = early.after_ms < denied.before_ms + w.reset_after_ms;
            EXPECT_FALSE(early.verdict->allowed) << describe(early);

            std::this_thread::sleep_until(std::chrono::system_clock::time_point(
                std::chrono::milliseconds(denied.after_ms + 1'000 * w.retry_after_s)));
            const Observed after = check(p, k, 1);
            EXPECT_TRUE(after.verdict->allowed) << describe(after);
        }();
        return in_time;
    });
}

// ---- concurrency leases ----------------------------------------------------------------------

// The concurrency algorithm's own cases (lua/concurrency.lua, memory/concurrency.cpp).
class LeaseConformance : public Conformance {};

TEST_P(LeaseConformance, ReleaseFreesExactlyOneSlotAndOnlyOnce) {
    const Policy p = policy(3, 600s);
    const std::string k = key(p, "leaser");
    std::vector<std::string> leases;
    for (std::int64_t left : {2, 1, 0}) {
        const Observed o = check(p, k, 1);
        ASSERT_TRUE(o.verdict->allowed) << describe(o);
        EXPECT_EQ(o.window().remaining, left);
        EXPECT_EQ(o.window().lease.size(), 32u);
        leases.push_back(o.window().lease);
    }
    EXPECT_EQ(std::set<std::string>(leases.begin(), leases.end()).size(), 3u) << "every lease id is new";
    const Observed full = check(p, k, 1);
    EXPECT_FALSE(full.verdict->allowed);
    EXPECT_TRUE(full.window().lease.empty());
    EXPECT_EQ(full.window().retry_after_s, 600) << "when the oldest lease expires: " << describe(full);

    const Observed freed = lane_->release(p, k, leases[1]);
    ASSERT_TRUE(freed.verdict.has_value()) << describe(freed);
    EXPECT_TRUE(freed.verdict->allowed) << describe(freed);
    EXPECT_EQ(freed.window().remaining, 1);
    EXPECT_EQ(freed.window().reset_after_ms, 0) << "a slot is free now";
    for (const std::string& twice : {leases[1], std::string(32, 'f')}) {
        const Observed none = lane_->release(p, k, twice);
        EXPECT_FALSE(none.verdict->allowed) << describe(none);
        EXPECT_EQ(none.window().remaining, 1);
    }
    EXPECT_TRUE(check(p, k, 1).verdict->allowed);
    EXPECT_FALSE(check(p, k, 1).verdict->allowed) << "the release freed one slot, not more";
}

TEST_P(LeaseConformance, AnUnreleasedLeaseExpiresAndCannotBeReleasedAfter) {
    const Policy p = policy(1, 400ms);
    const std::string k = key(p, "forgetful");
    const Observed held = check(p, k, 1);
    ASSERT_TRUE(held.verdict->allowed);
    const Observed denied = check(p, k, 1);
    ASSERT_FALSE(denied.verdict->allowed);
    EXPECT_LE(denied.window().reset_after_ms, 400);
    // Awaited: the slot comes back when the lease ends, not before.
    Observed again = check(p, k, 1);
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (!again.verdict->allowed && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(5ms);  // a poll of the awaited condition, not a guess
        again = check(p, k, 1);
    }
    ASSERT_TRUE(again.verdict->allowed);
    EXPECT_GE(again.after_ms, held.before_ms + 400) << describe(again);
    const Observed late = lane_->release(p, k, held.window().lease);
    EXPECT_FALSE(late.verdict->allowed) << "an expired lease frees nothing: " << describe(late);
    EXPECT_EQ(late.window().remaining, 0) << "the new holder keeps its slot";
}

TEST_P(LeaseConformance, ALayeredCheckDeniedByAnotherLimitHoldsNoSlot) {
    const Policy slots = policy(3, 600s);
    Policy hourly = policy(1, 600s);
    hourly.name = "conf-hourly";
    hourly.algorithm = Algorithm::fixed_window;
    const std::string ks = key(slots, "layered");
    const std::string kh = key(hourly, "layered");
    const auto both = [&] {
        std::vector<store::LimitCheck> checks{{&slots, ks, 1}, {&hourly, kh, 1}};
        Observed o = lane_->apply_all(std::move(checks));
        if (!o.verdict) throw std::runtime_error(describe(o));
        return o;
    };
    const Observed first = both();
    ASSERT_TRUE(first.verdict->allowed) << describe(first);
    EXPECT_EQ(first.verdict->windows[0].lease.size(), 32u);
    const Observed second = both();
    ASSERT_FALSE(second.verdict->allowed);
    EXPECT_TRUE(second.verdict->windows[0].allowed);
    EXPECT_EQ(second.verdict->windows[0].remaining, 2) << "the denied check took no slot";
    EXPECT_TRUE(second.verdict->windows[0].lease.empty());
    const Observed alone = check(slots, ks, 1);
    EXPECT_EQ(alone.window().remaining, 1);
}

INSTANTIATE_TEST_SUITE_P(Stores, LeaseConformance,
                         ::testing::Combine(::testing::ValuesIn(conformance_kinds()),
                                            ::testing::Values(Algorithm::concurrency)),
                         [](const auto& info) { return std::string(to_string(std::get<0>(info.param))); });

INSTANTIATE_TEST_SUITE_P(Stores, Conformance,
                         ::testing::Combine(::testing::ValuesIn(conformance_kinds()),
                                            ::testing::ValuesIn(configurable_algorithms())),
                         [](const auto& info) {
                             return std::string(to_string(std::get<0>(info.param))) + "_" +
                                    policy::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace ratelimitd::test::store_conformance_test
