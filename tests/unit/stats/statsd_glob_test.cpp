// statsd_exporter's glob: one '*' per part matching bytes but '.', the same number of parts,
// captures in order; $n expansion.
#include "ratelimitd/stats/statsd_glob.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::stats {
namespace {

std::vector<std::string> parts(std::initializer_list<const char*> p) { return {p.begin(), p.end()}; }

TEST(StatsdGlob, AStarMatchesOnePartAndIsCaptured) {
    std::vector<std::string> captures;
    const auto glob = parts({"ratelimit", "service", "rate_limit", "*", "*", "total_hits"});
    ASSERT_TRUE(glob_match(glob, "ratelimit.service.rate_limit.edge.user_alice.total_hits", captures));
    EXPECT_EQ(captures, (std::vector<std::string>{"edge", "user_alice"}));
}

TEST(StatsdGlob, APathOfAnotherDepthDoesNotMatch) {
    std::vector<std::string> captures;
    const auto glob = parts({"ratelimit", "service", "rate_limit", "*", "*", "total_hits"});
    EXPECT_FALSE(glob_match(glob, "ratelimit.service.rate_limit.edge.a.b.total_hits", captures));
    EXPECT_FALSE(glob_match(glob, "ratelimit.service.rate_limit.edge.total_hits", captures));
    EXPECT_FALSE(glob_match(glob, "ratelimit.service.rate_limit.edge.a.over_limit", captures));
    EXPECT_TRUE(captures.empty()) << "a failed match leaves no capture behind";
}

TEST(StatsdGlob, AStarInsideAPartAndAnEmptyRun) {
    std::vector<std::string> captures;
    EXPECT_TRUE(glob_match(parts({"a", "x*y*z"}), "a.x1y2y3z", captures));
    EXPECT_EQ(captures, (std::vector<std::string>{"1y2", "3"}))
        << "the first star takes the longest run, as a greedy ([^.]*) does";
    captures.clear();
    EXPECT_TRUE(glob_match(parts({"a", "*"}), "a.", captures));
    EXPECT_EQ(captures, (std::vector<std::string>{""}));
    EXPECT_FALSE(glob_match(parts({"a", "b"}), "a.c", captures));
}

TEST(StatsdGlob, CapturesExpandByNumber) {
    const std::vector<std::string> c{"edge", "user"};
    EXPECT_EQ(expand_captures("$1", c), "edge");
    EXPECT_EQ(expand_captures("${2}_x", c), "user_x");
    EXPECT_EQ(expand_captures("$1.$2", c), "edge.user");
    EXPECT_EQ(expand_captures("$3", c), "") << "a capture that does not exist is empty";
    EXPECT_EQ(expand_captures("cost $ and ${x}", c), "cost $ and ${x}") << "not a reference: kept";
}

}  // namespace
}  // namespace ratelimitd::stats
