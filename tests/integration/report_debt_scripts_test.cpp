// max_debt in lua/*.lua on a real redis-server, step for step against the embedded store: the
// same numbers at the same instants (the scripts take the instant as ARGV[7] and the bound in
// their mode, "report:<max_debt>", as multi.lua hands them on). And the sliding log's shape:
// a few weighted entries, whatever the reports.
#include "ratelimitd/policy/algorithm.hpp"
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/store/memory/memory_store.hpp"
#include "ratelimitd/store/redis/lua_sources.hpp"
#include "ratelimitd/store/redis/scripts.hpp"
#include "ratelimitd/store/redis/script_args.hpp"
#include "support/manual_clock.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace ratelimitd::test::report_debt_scripts_test {
namespace {

using policy::Algorithm;
using policy::Policy;

std::string source_of(std::string_view name) {
    for (const auto& s : store::redis::lua_sources()) {
        if (s.name == name) return std::string(s.text);
    }
    throw std::runtime_error("no script " + std::string(name));
}

std::string text_of(const check::Verdict& v) {
    const auto& w = v.windows.front();
    return std::to_string(w.allowed ? 1 : 0) + " " + std::to_string(w.limit) + " " + std::to_string(w.remaining) + " " +
           std::to_string(w.reset_epoch_s) + " " + std::to_string(w.retry_after_s) + " " +
           std::to_string(w.reset_after_s) + " " + std::to_string(w.reset_after_ms);
}

// The real clock's millisecond: Redis's own TTLs run on it, so instants stay close to it.
std::int64_t now_ms() { return SystemClock{}.now_ms(); }

class DebtScriptsMatchEmbedded : public ::testing::TestWithParam<Algorithm> {
protected:
    static void TearDownTestSuite() {
        delete redis_;
        redis_ = nullptr;
    }
    void SetUp() override {
        if (redis_ == nullptr) redis_ = new RedisServer();
        ASSERT_EQ(redis_->command({"FLUSHALL"}), "OK");
    }

    std::vector<std::string> argv(const Policy& p, const std::string& key, std::int64_t cost, const std::string& mode,
                                  std::int64_t now) {
        return {"EVAL", source_of(policy::to_string(p.algorithm)), "1", key, std::to_string(p.limit),
                std::to_string(p.window.count()), std::to_string(p.burst), std::to_string(cost), member(p), mode,
                std::to_string(now)};
    }

    /// A check of `cost` at `now` on both stores; the replies.
    std::pair<std::string, std::string> check(const Policy& p, const std::string& key, std::int64_t cost,
                                              std::int64_t now) {
        clock_.set(now);
        return {redis_->command(argv(p, key, cost, "", now)),
                text_of(memory_.decide(p, key, static_cast<std::uint32_t>(cost)))};
    }

    /// A report of `cost` at `now` on both stores, the script bounded by the policy's max_debt.
    std::pair<std::string, std::string> report(const Policy& p, const std::string& key, std::int64_t cost,
                                               std::int64_t now) {
        clock_.set(now);
        const auto v = memory_.decide_all({store::LimitCheck{&p, key, 1, policy::Mode::report, cost}});
        return {redis_->command(argv(p, key, cost, "report:" + std::to_string(p.debt_bound()), now)), text_of(v)};
    }

    Policy policy(std::int64_t limit, std::int64_t window_ms, std::int64_t max_debt) const {
        Policy p;
        p.name = std::string("d-") + policy::to_string(GetParam());
        p.algorithm = GetParam();
        p.limit = limit;
        p.window = std::chrono::milliseconds(window_ms);
        p.burst = limit;
        p.max_debt = max_debt;
        // A rolling fixed window reports its Redis TTL, which runs on the real clock: calendar
        // minutes report their boundary instead.
        if (policy::traits(p.algorithm).aligned) p.calendar = CalendarUnit::minute;
        return p;
    }

    std::string key(const Policy& p, const std::string& tenant) const {
        return p.calendar ? policy::make_calendar_key("rl", p.name, tenant, "global", "1m")
                          : policy::make_key("rl", p.name, tenant, "global");
    }

    std::string member(const Policy& p) {
        if (p.calendar) return store::redis::calendar_arg(p);
        return policy::traits(p.algorithm).member == policy::ScriptMember::per_unit ? "m:" + std::to_string(++members_) : "";
    }

    static RedisServer* redis_;
    ratelimitd::testing::ManualClock clock_;
    store::memory::MemoryStore memory_{clock_};
    int members_ = 0;
};
RedisServer* DebtScriptsMatchEmbedded::redis_ = nullptr;

#define EXPECT_SAME(step)                                 \
    do {                                                  \
        const auto both = (step);                         \
        EXPECT_EQ(both.first, both.second) << #step;      \
    } while (0)

// reset_after_ms, the last number of a reply.
std::int64_t wait_of(const std::string& reply) { return std::stoll(reply.substr(reply.rfind(' ') + 1)); }

TEST_P(DebtScriptsMatchEmbedded, AReportChargesUpToMaxDebtAndTheDebtIsRepaidAtTheSameInstant) {
    const Policy p = policy(10, 600'000, 4);
    const std::string k = key(p, "t");
    const std::int64_t t = now_ms() / 60'000 * 60'000 + 60'000;  // the next whole minute
    EXPECT_SAME(check(p, k, 3, t));
    EXPECT_SAME(report(p, k, 1'000'000, t + 1));  // 7 fit, 4 of debt, the rest is not owed
    EXPECT_SAME(report(p, k, 5, t + 2));          // at the bound: nothing more is owed
    const auto denied = check(p, k, 1, t + 3);
    ASSERT_EQ(denied.first, denied.second);
    EXPECT_EQ(denied.first.substr(0, 1), "0") << denied.first;
    const std::int64_t wait = wait_of(denied.first);
    // Bucket and GCRA: 4 owed + 1 to spend at one per minute; the windows repay at their end.
    if (policy::traits(GetParam()).burst) {
        EXPECT_EQ(wait, 5 * 60'000 - 1);
    }
    EXPECT_LE(wait, 2 * 600'000) << denied.first;
    EXPECT_SAME(check(p, k, 1, t + 3 + wait - 1));
    const auto repaid = check(p, k, 1, t + 3 + wait);
    EXPECT_EQ(repaid.first, repaid.second);
    EXPECT_EQ(repaid.first.substr(0, 2), "1 ") << "repaid at reset: " << repaid.first;
}

TEST_P(DebtScriptsMatchEmbedded, NoDebtAtAllWithMaxDebtZero) {
    const Policy p = policy(10, 600'000, 0);
    const std::string k = key(p, "t");
    const std::int64_t t = now_ms() / 60'000 * 60'000 + 60'000;
    EXPECT_SAME(report(p, k, 25, t));
    EXPECT_SAME(report(p, k, 25, t + 1));
    EXPECT_SAME(check(p, k, 1, t + 2));
}

std::vector<Algorithm> reporting_algorithms() {
    auto all = store::redis::all_algorithms();
    std::erase_if(all, [](Algorithm a) { return !policy::traits(a).reports; });
    return all;
}

INSTANTIATE_TEST_SUITE_P(Algorithms, DebtScriptsMatchEmbedded, ::testing::ValuesIn(reporting_algorithms()),
                         [](const auto& info) { return std::string(policy::to_string(info.param)); });

// The sliding log step by step: checks of several costs, reports into debt, entries leaving
// the window one by one, at every reset instant, and the members the key holds.
class SlidingLogDebt : public DebtScriptsMatchEmbedded {};

TEST_P(SlidingLogDebt, WeightedEntriesDecideAsTheStoreAndStayFew) {
    const Policy p = policy(10, 600'000, 6);
    const std::string k = key(p, "t");
    const std::int64_t t = now_ms();
    EXPECT_SAME(check(p, k, 3, t));
    EXPECT_SAME(check(p, k, 4, t + 1000));
    EXPECT_SAME(check(p, k, 4, t + 2000));  // denied: 7 + 4 > 10
    EXPECT_SAME(report(p, k, 5, t + 3000));  // 3 fit, 2 of debt: one debt entry of 5
    EXPECT_SAME(report(p, k, 2, t + 4000));  // joins the debt entry, moved to t + 4000
    EXPECT_SAME(report(p, k, 100, t + 5000));  // up to max_debt: 2 more
    EXPECT_EQ(redis_->integer({"ZCARD", k}), 3) << redis_->command({"ZRANGE", k, "0", "-1", "WITHSCORES"});
    for (std::int64_t at : {t + 6000, t + 600'000, t + 601'000, t + 604'999, t + 605'000, t + 605'001}) {
        EXPECT_SAME(check(p, k, 1, at));
    }
    // After the debt left: checks of every size, and the reset of each denial reached exactly.
    std::int64_t at = t + 605'002;
    for (std::int64_t cost : {4, 4, 3, 2, 10, 1}) {
        const auto both = check(p, k, cost, at);
        EXPECT_EQ(both.first, both.second) << "cost " << cost << " at +" << at - t;
        if (both.first.substr(0, 1) == "0") {
            at += wait_of(both.first);
            EXPECT_SAME(check(p, k, cost, at));
        }
        at += 777;
    }
    EXPECT_LE(redis_->integer({"ZCARD", k}), 2 * (p.limit + 1));
}

TEST_P(SlidingLogDebt, ALogOfOneMemberPerUnitIsTurnedIntoOneEntry) {
    const Policy p = policy(10, 600'000, 10);
    const std::string k = key(p, "legacy");
    const std::int64_t t = now_ms();
    // As the script wrote it before entries were weighted: one member per unit.
    for (int i = 1; i <= 8; ++i) {
        redis_->command({"ZADD", k, std::to_string(t + i), "old:" + std::to_string(i)});
    }
    redis_->command({"PEXPIRE", k, "600000"});
    const std::string reply = redis_->command(argv(p, k, 2, "", t + 10));
    EXPECT_EQ(reply.substr(0, 6), "1 10 0") << "8 units counted, 2 more fit: " << reply;
    EXPECT_EQ(redis_->integer({"ZCARD", k}), 2);
    const std::string denied = redis_->command(argv(p, k, 1, "", t + 11));
    // The 8 units leave with the newest of them, never earlier.
    EXPECT_EQ(wait_of(denied), 8 + 600'000 - 11) << denied;
}

INSTANTIATE_TEST_SUITE_P(SlidingLog, SlidingLogDebt, ::testing::Values(Algorithm::sliding_log),
                         [](const auto& info) { return std::string(policy::to_string(info.param)); });

}  // namespace
}  // namespace ratelimitd::test::report_debt_scripts_test

#undef EXPECT_SAME  // a macro outlives its file in a unity batch
