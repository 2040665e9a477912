// statsd counter lines: name, tags as ".__k=v" sorted by name, ":delta|c\n".
#include "ratelimitd/stats/statsd_line.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::stats {
namespace {

TEST(StatsdLine, ACounterLine) {
    std::string out;
    append_statsd_counter(out, "ratelimit.service.rate_limit.edge.user.total_hits", "", 7);
    append_statsd_counter(out, "ratelimit.service.config_load_success", "", 1);
    EXPECT_EQ(out, "ratelimit.service.rate_limit.edge.user.total_hits:7|c\nratelimit.service.config_load_success:1|c\n");
}

TEST(StatsdLine, TagsAreSortedByNameAndAppendedToTheName) {
    const auto suffix = statsd_tag_suffix({{"zone", "eu-1"}, {"app", "edge"}});
    EXPECT_EQ(suffix, ".__app=edge.__zone=eu-1");
    std::string out;
    append_statsd_counter(out, "ratelimit.service.config_load_error", suffix, 2);
    EXPECT_EQ(out, "ratelimit.service.config_load_error.__app=edge.__zone=eu-1:2|c\n");
}

TEST(StatsdLine, BytesThatWouldEndTheNameBecomeUnderscores) {
    EXPECT_EQ(statsd_tag_suffix({{"k:1", "a|b c\n"}}), ".__k_1=a_b_c_");
    EXPECT_EQ(statsd_tag_suffix({}), "");
}

}  // namespace
}  // namespace ratelimitd::stats
