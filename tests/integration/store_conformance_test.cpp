// One conformance suite for every Store: the Redis scripts and the embedded store, run through the
// same Store interface, must give the same verdicts and the same numbers in every scenario. Here:
// every backend kind covered, exact admission under concurrency, keys apart, costs; the suite's
// instantiation over every store and algorithm (the sequence scenarios are in
// store_conformance_sequence_test.cpp, the lease ones in store_conformance_lease_test.cpp).
#include "integration/store_conformance.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::test::store_conformance_test {
namespace {

using namespace conformance;

TEST(ConformanceStores, EveryBackendKindIsCovered) {
    for (const store::BackendKind* backend : store::backend_kinds()) {
        const bool elsewhere = std::find(std::begin(covered_elsewhere), std::end(covered_elsewhere), backend->name) !=
                               std::end(covered_elsewhere);
        EXPECT_TRUE(lane_of(backend->name) || elsewhere) << backend->name << " has no conformance lane";
    }
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

INSTANTIATE_TEST_SUITE_P(Stores, Conformance,
                         ::testing::Combine(::testing::ValuesIn(conformance_kinds()),
                                            ::testing::ValuesIn(configurable_algorithms())),
                         [](const auto& info) {
                             return std::string(to_string(std::get<0>(info.param))) + "_" +
                                    policy::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace ratelimitd::test::store_conformance_test
