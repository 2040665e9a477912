// The scripts' argument layout as script_args.cpp writes it, read back off the wire.
#include "ratelimitd/store/redis/script_args.hpp"

#include "support/script_args_wire.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <ranges>
#include <span>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {
namespace {

using policy::Algorithm;
using Argv = std::vector<std::string>;
using ratelimitd::test::sent_argv;

CheckArgs check_of(Algorithm a, std::string key, std::string member = {}) {
    return CheckArgs{a, 10, 60'000, 12, 3, std::move(key), std::move(member)};
}

Argv grouped(std::vector<CheckArgs> checks) { return sent_argv(GroupedChecks(std::move(checks))); }

TEST(ScriptArgs, ASingleCheckIsOneKeyThenTheAlgorithmsOwnFiveArguments) {
    EXPECT_EQ(sent_argv(SingleCheck(check_of(Algorithm::gcra, "k"))),
              (Argv{"1", "k", "10", "60000", "12", "3", ""}));
}

TEST(ScriptArgs, APeekAddsPeekLast) {
    EXPECT_EQ(sent_argv(SingleCheck(check_of(Algorithm::sliding_log, "k", "id:1"), SingleMode::peek)),
              (Argv{"1", "k", "10", "60000", "12", "3", "id:1", "peek"}));
}

TEST(ScriptArgs, GroupedChecksAreTheKeysThenArgsPerCheckValuesEach) {
    Argv argv = grouped({check_of(Algorithm::token_bucket, "a"), check_of(Algorithm::fixed_window, "b")});
    EXPECT_EQ(argv, (Argv{"2", "a", "b",                                     //
                          "token_bucket", "10", "60000", "12", "3", "", "",  //
                          "fixed_window", "10", "60000", "12", "3", "", ""}));
    // The stride the build writes into lua/batch.lua and lua/multi.lua.
    EXPECT_EQ(argv.size(), 1 + 2 + 2 * args_per_check);
}

TEST(ScriptArgs, AReleaseNamesItsLeaseThenRelease) {
    policy::Policy p;
    p.algorithm = Algorithm::concurrency;
    p.limit = 4;
    p.window = std::chrono::milliseconds(30'000);
    p.burst = 4;
    EXPECT_EQ(sent_argv(release_call(p, "k", "lease-1")), (Argv{"1", "k", "4", "30000", "4", "0", "lease-1", "release"}));
}

// Numbers are written by std::to_chars: the signs and widths std::to_string wrote.
TEST(ScriptArgs, ModesAndNumbersAreWrittenAsTheScriptsReadThem) {
    CheckArgs report = check_of(Algorithm::fixed_window, "r");
    report.report = true;
    report.report_cost = -17;
    report.max_debt = 250;
    CheckArgs ask = check_of(Algorithm::gcra, "a");
    ask.part = policy::Part::ask;
    CheckArgs charge = check_of(Algorithm::sliding_window, "c");
    charge.part = policy::Part::charge;
    charge.limit = std::numeric_limits<std::int64_t>::max();
    charge.window_ms = 0;
    EXPECT_EQ(grouped({report, ask, charge}),
              (Argv{"3", "r", "a", "c",                                                     //
                    "fixed_window", "10", "60000", "12", "-17", "", "report:250",           //
                    "gcra", "10", "60000", "12", "3", "", "ask",                            //
                    "sliding_window", "9223372036854775807", "0", "12", "3", "", "charge"}));
}

// The coalesced batch is written from the queued checks through a view, never copied.
TEST(ScriptArgs, AViewOfTheCallersChecksIsWrittenLikeAVector) {
    struct Queued {
        CheckArgs args;
        int other = 0;
    };
    std::vector<Queued> queue{{check_of(Algorithm::token_bucket, "a")}, {check_of(Algorithm::gcra, "b")}};
    queue[1].args.notify = "8";
    const GroupedChecks view(std::views::transform(queue, &Queued::args));
    EXPECT_EQ(sent_argv(view), grouped({queue[0].args, queue[1].args}));
    EXPECT_EQ(sent_argv(view).back(), "8");
}

TEST(ScriptArgs, CheckArgsTakeThePolicysNumbers) {
    policy::Policy p;
    p.algorithm = Algorithm::sliding_window;
    p.limit = 5;
    p.window = std::chrono::milliseconds(1'500);
    p.burst = 5;
    MemberSource members("i");
    const CheckArgs c = check_args(p, "k", 2, members);
    EXPECT_EQ(c.algorithm, Algorithm::sliding_window);
    EXPECT_EQ(c.limit, 5);
    EXPECT_EQ(c.window_ms, 1'500);
    EXPECT_EQ(c.burst, 5);
    EXPECT_EQ(c.cost, 2u);
    EXPECT_EQ(c.key, "k");
    EXPECT_EQ(c.member, "");
}

TEST(ScriptArgs, AReportCarriesItsPolicysThresholdsAndDebtBoundAndACheckItsThresholds) {
    policy::Policy p;
    p.algorithm = Algorithm::fixed_window;
    p.limit = 10;
    p.window = std::chrono::milliseconds(60'000);
    p.burst = 10;
    auto rule = std::make_shared<policy::NotifyRule>();
    rule->at = {0.8};
    rule->debt = 25;
    p.notify = rule;
    MemberSource members("i");
    EXPECT_EQ(check_args(p, "k", 1, members).notify, "8");
    const CheckArgs report = report_args(p, "k", 30, members);
    EXPECT_EQ(report.notify, "8;debt:25");
    std::vector<CheckArgs> one{report};
    const Argv argv = grouped(std::move(one));
    EXPECT_EQ(argv.back(), "8;debt:25") << "the pair (1, thresholds and bound) after the arguments";
    EXPECT_EQ(argv[argv.size() - 2], "1");
    rule->debt = 0;
    EXPECT_EQ(report_args(p, "k", 30, members).notify, "8;") << "thresholds only";
    rule->at.clear();
    EXPECT_EQ(report_args(p, "k", 30, members).notify, "") << "neither: no pair";
}

TEST(ScriptArgs, SlidingLogMembersAreFreshEachTimeAndOthersGetNone) {
    policy::Policy log;
    log.algorithm = Algorithm::sliding_log;
    policy::Policy bucket;
    MemberSource members("sidecar-1");
    EXPECT_EQ(members.next(log), "sidecar-1:1");
    EXPECT_EQ(members.next(bucket), "");
    EXPECT_EQ(members.next(log), "sidecar-1:2");
}

// redis_state_layout reaches lua/token_bucket.lua as its member (ARGV[5]), so batch.lua and
// multi.lua keep their args_per_check; the other algorithms never see it.
TEST(ScriptArgs, TheHashLayoutIsTheTokenBucketsMember) {
    policy::Policy bucket;
    bucket.algorithm = Algorithm::token_bucket;
    policy::Policy gcra;
    gcra.algorithm = Algorithm::gcra;
    MemberSource strings("i");
    MemberSource hashes("i", StateLayout::hash);
    EXPECT_EQ(strings.next(bucket), "");
    EXPECT_EQ(hashes.next(bucket), "hash");
    EXPECT_EQ(hashes.next(gcra), "");
    EXPECT_EQ(check_args(bucket, "k", 1, hashes).member, "hash");
    EXPECT_EQ(report_args(bucket, "k", 5, hashes).member, "hash");
    EXPECT_EQ(sent_argv(SingleCheck(check_args(bucket, "k", 1, hashes), SingleMode::peek)),
              (Argv{"1", "k", "0", "0", "0", "1", "hash", "peek"}));
}

}  // namespace
}  // namespace ratelimitd::store::redis
