// The report mode and calendar windows of lua/*.lua on a real redis-server, step for step
// against the embedded store: the same numbers at the same instants. The scripts take the
// instant as ARGV[7] (as multi.lua hands its TIME on), so a leap day or a year end is reached
// without waiting; what depends on Redis's own TTL clock (a rolling fixed window's expiry) is
// left to the real-time suites.
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

namespace ratelimitd::test::report_calendar_scripts_test {
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

class ScriptsMatchEmbedded : public ::testing::TestWithParam<Algorithm> {
protected:
    static void TearDownTestSuite() {
        delete redis_;
        redis_ = nullptr;
    }
    void SetUp() override {
        if (redis_ == nullptr) redis_ = new RedisServer();
        ASSERT_EQ(redis_->command({"FLUSHALL"}), "OK");
    }

    /// A check of `cost` (the algorithm's own script) at `now`, on both stores; the replies.
    std::pair<std::string, std::string> check(const Policy& p, const std::string& key, std::uint32_t cost,
                                              std::int64_t now) {
        std::vector<std::string> argv{"EVAL", source_of(policy::to_string(p.algorithm)), "1", key,
                                      std::to_string(p.limit), std::to_string(p.window.count()),
                                      std::to_string(p.burst), std::to_string(cost), member(p), "",
                                      std::to_string(now)};
        clock_.set(now);
        return {redis_->command(argv), text_of(memory_.decide(p, key, cost))};
    }

    /// A report of `cost` at `now` on both stores: the algorithm's script in report mode, as
    /// multi.lua runs it (multi.lua reads TIME itself, so it cannot be handed an instant);
    /// the store's whole road through multi.lua is tested against the binary
    /// (tests/shell/php_client_report_test.sh).
    std::pair<std::string, std::string> report(const Policy& p, const std::string& key, std::int64_t cost,
                                               std::int64_t now) {
        std::vector<std::string> argv{"EVAL", source_of(policy::to_string(p.algorithm)), "1", key,
                                      std::to_string(p.limit), std::to_string(p.window.count()),
                                      std::to_string(p.burst), std::to_string(cost), member(p), "report",
                                      std::to_string(now)};
        clock_.set(now);
        const auto v = memory_.decide_all({store::LimitCheck{&p, key, 1, policy::Mode::report, cost}});
        return {redis_->command(argv), text_of(v)};
    }

    Policy policy(std::int64_t limit, std::int64_t window_ms) const {
        Policy p;
        p.name = std::string("s-") + policy::to_string(GetParam());
        p.algorithm = GetParam();
        p.limit = limit;
        p.window = std::chrono::milliseconds(window_ms);
        p.burst = limit;
        return p;
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
RedisServer* ScriptsMatchEmbedded::redis_ = nullptr;

#define EXPECT_SAME(step)                                 \
    do {                                                  \
        const auto both = (step);                         \
        EXPECT_EQ(both.first, both.second) << #step;      \
    } while (0)

// The real clock's millisecond: Redis's own TTLs run on it, so instants stay close to it.
std::int64_t now_ms() { return SystemClock{}.now_ms(); }

TEST_P(ScriptsMatchEmbedded, DebtIsRepaidAtTheSameInstant) {
    Policy p = policy(10, 10'000);
    if (policy::traits(GetParam()).aligned) p.calendar = CalendarUnit::minute;  // expiry by period, not TTL
    const std::string key = p.calendar ? policy::make_calendar_key("rl", p.name, "t", "global", "1m")
                                       : policy::make_key("rl", p.name, "t", "global");
    const std::int64_t t = now_ms() / 60'000 * 60'000 + 60'000;  // the next whole minute
    EXPECT_SAME(report(p, key, 15, t));
    const auto denied = check(p, key, 1, t + 1);
    ASSERT_EQ(denied.first, denied.second);
    // reset_after_ms is the last number of the reply
    const std::int64_t wait = std::stoll(denied.first.substr(denied.first.rfind(' ') + 1));
    EXPECT_GT(wait, 0) << denied.first;
    EXPECT_SAME(check(p, key, 1, t + 1 + wait - 1));
    const auto repaid = check(p, key, 1, t + 1 + wait);
    EXPECT_EQ(repaid.first, repaid.second);
    EXPECT_EQ(repaid.first.substr(0, 2), "1 ") << "repaid at reset: " << repaid.first;
}

TEST_P(ScriptsMatchEmbedded, RefundsStopAtCapacity) {
    if (!policy::traits(GetParam()).refunds) GTEST_SKIP() << "no refunds on this algorithm (planner: 400)";
    Policy p = policy(10, 600'000);
    // A rolling fixed window reports its Redis TTL, which runs on the real clock: calendar
    // minutes report their boundary instead.
    if (policy::traits(GetParam()).aligned) p.calendar = CalendarUnit::minute;
    const std::string key = p.calendar ? policy::make_calendar_key("rl", p.name, "t", "global", "1m")
                                       : policy::make_key("rl", p.name, "t", "global");
    const std::int64_t t = now_ms() / 60'000 * 60'000 + 60'000;  // the next minute: all steps in one
    EXPECT_SAME(report(p, key, -5, t));
    EXPECT_SAME(check(p, key, 3, t + 1));
    EXPECT_SAME(report(p, key, -5, t + 2));
    EXPECT_SAME(check(p, key, 10, t + 3));
    EXPECT_SAME(check(p, key, 1, t + 4));
    EXPECT_SAME(report(p, key, 7, t + 5));
}

// Every algorithm that takes reports: the planner refuses them on concurrency (leases).
std::vector<Algorithm> reporting_algorithms() {
    auto all = store::redis::all_algorithms();
    std::erase_if(all, [](Algorithm a) { return !policy::traits(a).reports; });
    return all;
}

INSTANTIATE_TEST_SUITE_P(Algorithms, ScriptsMatchEmbedded, ::testing::ValuesIn(reporting_algorithms()),
                         [](const auto& info) { return std::string(policy::to_string(info.param)); });

class CalendarScriptMatchesEmbedded : public ScriptsMatchEmbedded {};

// Real dates through the Lua calendar and the C++ one: (unit, offset, instant).
TEST_P(CalendarScriptMatchesEmbedded, RealDates) {
    struct Case {
        CalendarUnit unit;
        std::int32_t offset;
        std::int64_t at;
    };
    const Case cases[] = {
        // Instants hours before their boundary: Redis's TTLs run on the real clock, so a key
        // one millisecond from its end would be gone before the next step.
        {CalendarUnit::month, 0, 1835438400000},   // 2028-02-29T12:00Z: a leap February
        {CalendarUnit::month, 0, 4107492000000},   // 2100-02-28T10:00Z: no leap day in 2100
        {CalendarUnit::year, 0, 1798718400000},    // 2026-12-31T12:00Z
        {CalendarUnit::week, 0, 1798804800000},    // 2027-01-01: its ISO week began 2026-12-28
        {CalendarUnit::month, 120, 1796077800000}, // 2026-11-30T22:30Z: December at +02:00
        {CalendarUnit::day, -330, 1796077800000},  // -05:30
        {CalendarUnit::hour, 0, 1796144989123},
    };
    for (const auto& c : cases) {
        Policy p = policy(3, 60'000);
        p.calendar = c.unit;
        p.utc_offset_minutes = c.offset;
        const std::string key = policy::make_calendar_key("rl", p.name, "t" + std::to_string(c.at), "global",
                                                          to_string(c.unit));
        EXPECT_SAME(check(p, key, 2, c.at));
        EXPECT_SAME(check(p, key, 2, c.at));  // denied: 2 + 2 > 3
        EXPECT_SAME(report(p, key, 5, c.at));  // debt
        const auto period = calendar_period(c.unit, c.offset, c.at);
        const auto next = check(p, key, 3, period.end_ms);  // the next period starts empty
        EXPECT_EQ(next.first, next.second);
        EXPECT_EQ(next.first.substr(0, 4), "1 3 ") << "the next period: " << next.first;
    }
}

INSTANTIATE_TEST_SUITE_P(FixedWindow, CalendarScriptMatchesEmbedded, ::testing::Values(Algorithm::fixed_window),
                         [](const auto& info) { return std::string(policy::to_string(info.param)); });

}  // namespace
}  // namespace ratelimitd::test::report_calendar_scripts_test

#undef EXPECT_SAME  // a macro outlives its file in a unity batch
