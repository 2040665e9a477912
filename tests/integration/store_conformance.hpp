// The conformance suite's shared parts (store_conformance_test.cpp, store_conformance_sequence_test.cpp,
// store_conformance_lease_test.cpp): the stores under test (one Lane per server thread, Redis or
// embedded), the Conformance fixture every scenario runs in, and what an admitted check must see.
// The Redis scripts and the embedded store, run through the same Store interface, must give the
// same verdicts and the same numbers in every scenario.
#pragma once

#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/core/clock.hpp"
#include "ratelimitd/store/backend_factory.hpp"
#include "ratelimitd/store/memory/memory_store.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/redis_store.hpp"
#include "ratelimitd/store/redis/scripts.hpp"
#include "support/held_window.hpp"
#include "support/processes.hpp"
#include "support/run_until.hpp"

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

namespace ratelimitd::test::conformance {

namespace net = boost::asio;
using policy::Algorithm;
using policy::Policy;
using namespace std::chrono_literals;

// GCRA is the token bucket counted from the other end (the TAT is how far the bucket is from
// full), so every scenario expects the token bucket's numbers of it.
inline bool bucket_like(Algorithm a) { return a == Algorithm::token_bucket || a == Algorithm::gcra; }

enum class Kind { redis, embedded };

inline const char* to_string(Kind k) { return k == Kind::redis ? "redis" : "embedded"; }

// The stores under test come from the backends' list (store::backend_kinds()): each kind
// runs here through a Lane, or names the suite that covers it instead. A new backend with
// neither fails EveryBackendKindIsCovered.
inline std::optional<Kind> lane_of(std::string_view backend) {
    if (backend == "redis") return Kind::redis;  // redis:// and redis-sentinel://: one RedisStore
    if (backend == "embedded") return Kind::embedded;
    return std::nullopt;
}

// The same scripts, slot by slot, need a cluster of their own: cluster_test.cpp and
// cluster_layered_test.cpp run them on three primaries.
inline constexpr std::string_view covered_elsewhere[] = {"redis-cluster"};

// Every algorithm a config may name: erl_fixed_window (the Envoy planner's alone) charges past
// the limit by design, so the all-or-nothing rows below are not its own.
inline std::vector<Algorithm> configurable_algorithms() {
    auto all = store::redis::all_algorithms();
    std::erase_if(all, [](Algorithm a) { return !policy::traits(a).configurable; });
    return all;
}

inline std::vector<Kind> conformance_kinds() {
    std::vector<Kind> out;
    for (const store::BackendKind* backend : store::backend_kinds()) {
        const auto kind = lane_of(backend->name);
        if (kind && std::find(out.begin(), out.end(), *kind) == out.end()) out.push_back(*kind);
    }
    return out;
}

// The clock both stores read: Redis TIME and SystemClock are the same CLOCK_REALTIME, both
// truncated to milliseconds, so a call's [before, after] brackets the store's "now".
inline std::int64_t wall_ms() { return SystemClock{}.now_ms(); }

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + ((a % b) > 0 ? 1 : 0); }

/// One check as the test saw it: the store's answer and wall-clock times around the call.
struct Observed {
    result<check::Verdict> verdict;
    std::int64_t before_ms = 0;
    std::int64_t after_ms = 0;

    const check::WindowState& window() const { return verdict->windows.at(0); }
};

inline std::string describe(const Observed& o) {
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
        if (!run_until(ioc_, [this] { return redis_->any_ready(); }, 10s)) {
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
        if (!run_until(ioc_, [&] { return state->done == keys.size(); }, 30s)) {
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
        if (!run_until(ioc_, [&] { return out.has_value(); }, 30s)) throw std::runtime_error("no layered answer in 30 s");
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
        if (!run_until(ioc_, [&] { return out.has_value(); }, 30s)) throw std::runtime_error("no release answer in 30 s");
        return std::move(*out);
    }

private:
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
inline RedisServer* Conformance::redis_ = nullptr;

// ---- exact admission under concurrency -------------------------------------------------------

// Each admitted check saw a different `remaining`, 0..limit-1: the checks of one key were
// decided one at a time, as Redis runs one script at a time.
inline void expect_exactly_admitted(const std::vector<Observed>& all, std::int64_t limit) {
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

}  // namespace ratelimitd::test::conformance
