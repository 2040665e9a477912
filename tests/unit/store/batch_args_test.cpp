// lua/batch.lua's arguments as batch_args.hpp writes them, read back off the wire: each
// policy's numbers once, each check by its policy's index.
#include "ratelimitd/store/redis/batch_args.hpp"

#include "support/script_args_wire.hpp"

#include <gtest/gtest.h>

#include <ranges>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {
namespace {

using policy::Algorithm;
using Argv = std::vector<std::string>;
using ratelimitd::test::sent_argv;

CheckArgs limited_check(Algorithm a, std::string key, std::int64_t limit = 10, std::string member = {}) {
    return CheckArgs{a, limit, 60'000, 12, 3, std::move(key), std::move(member)};
}

Argv batch(std::vector<CheckArgs> checks) { return sent_argv(BatchChecks(std::move(checks))); }

TEST(BatchArgs, ChecksOfOnePolicySendItsNumbersOnce) {
    CheckArgs log = limited_check(Algorithm::sliding_log, "c", 10, "i:1");
    const Argv argv = batch({limited_check(Algorithm::token_bucket, "a"), limited_check(Algorithm::token_bucket, "b"), log});
    EXPECT_EQ(argv, (Argv{"3", "a", "b", "c",                      // numkeys, keys
                          "2",                                     // policies
                          "token_bucket", "10", "60000", "12",     // policy 1
                          "sliding_log", "10", "60000", "12",      // policy 2
                          "1", "3", "", "",                        // a: policy 1, cost, member, mode
                          "1", "3", "", "",                        // b
                          "2", "3", "i:1", ""}));                  // c: its own member
    // The strides the build writes into lua/batch.lua.
    EXPECT_EQ(argv.size(), 1 + 3 + 1 + 2 * args_per_policy + 3 * args_per_batch_check);
}

// Any number differing makes another group: the script reads nothing but the numbers.
TEST(BatchArgs, EachNumberTellsPoliciesApart) {
    CheckArgs base = limited_check(Algorithm::gcra, "k");
    CheckArgs limit = base;
    limit.limit = 11;
    CheckArgs window = base;
    window.window_ms = 1'000;
    CheckArgs burst = base;
    burst.burst = 13;
    CheckArgs algorithm = base;
    algorithm.algorithm = Algorithm::token_bucket;
    const Argv argv = batch({base, limit, window, burst, algorithm, base});
    EXPECT_EQ(argv[1 + 6], "5") << "five groups of numbers";
    const std::size_t checks_from = 1 + 6 + 1 + 5 * args_per_policy;
    Argv groups;
    for (std::size_t i = 0; i < 6; ++i) groups.push_back(argv[checks_from + i * args_per_batch_check]);
    EXPECT_EQ(groups, (Argv{"1", "2", "3", "4", "5", "1"}));
}

TEST(BatchArgs, PoliciesAreNumberedInTheOrderTheirFirstCheckCame) {
    PolicyGroups groups;
    const std::vector<CheckArgs> checks{limited_check(Algorithm::gcra, "a", 5), limited_check(Algorithm::gcra, "b", 7),
                                        limited_check(Algorithm::gcra, "c", 5), limited_check(Algorithm::gcra, "d", 7)};
    groups.assign(checks);
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups.first_of(0), 0u);
    EXPECT_EQ(groups.first_of(1), 1u);
    EXPECT_EQ(groups.group_of(2), 1u);
    EXPECT_EQ(groups.group_of(3), 2u);
    // Reused for another batch: nothing of the last one is left.
    groups.assign(std::vector<CheckArgs>{limited_check(Algorithm::gcra, "e", 7)});
    EXPECT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups.group_of(0), 1u);
}

TEST(BatchArgs, AReportsModeAndSignedCostAreItsOwn) {
    CheckArgs report = limited_check(Algorithm::fixed_window, "r");
    report.report = true;
    report.report_cost = -17;
    report.max_debt = 250;
    const Argv argv = batch({limited_check(Algorithm::fixed_window, "c"), report});
    EXPECT_EQ(Argv(argv.end() - 8, argv.end()), (Argv{"1", "3", "", "", "1", "-17", "", "report:250"}));
}

TEST(BatchArgs, ThresholdsFollowAsPairsOfCheckIndexAndSpec) {
    CheckArgs watched = limited_check(Algorithm::token_bucket, "b");
    watched.notify = "8,10";
    const Argv argv = batch({limited_check(Algorithm::token_bucket, "a"), watched});
    EXPECT_EQ(argv.size(), 1 + 2 + 1 + args_per_policy + 2 * args_per_batch_check + 2);
    EXPECT_EQ(Argv(argv.end() - 2, argv.end()), (Argv{"2", "8,10"}));
}

// The coalesced batch is written from the queued checks through a view, never copied.
TEST(BatchArgs, AViewOfTheCallersChecksIsWrittenLikeAVector) {
    struct Queued {
        CheckArgs args;
        int other = 0;
    };
    std::vector<Queued> queue{{limited_check(Algorithm::token_bucket, "a")}, {limited_check(Algorithm::gcra, "b")},
                              {limited_check(Algorithm::token_bucket, "c")}};
    const BatchChecks view(std::views::transform(queue, &Queued::args));
    EXPECT_EQ(sent_argv(view), batch({queue[0].args, queue[1].args, queue[2].args}));
    const BatchChecks one(std::views::single(limited_check(Algorithm::gcra, "k")));
    EXPECT_EQ(sent_argv(one), batch({limited_check(Algorithm::gcra, "k")}));
}

}  // namespace
}  // namespace ratelimitd::store::redis
