// Reading CLUSTER SLOTS replies and MOVED/ASK/TRYAGAIN/CLUSTERDOWN errors.
#include "ratelimitd/store/redis/cluster/slot_map.hpp"

#include "unit/store/reply_values.hpp"

#include <gtest/gtest.h>

#include <iterator>

using namespace ratelimitd;
using namespace ratelimitd::store::redis;
using namespace ratelimitd::store::redis::cluster;

namespace {

using ratelimitd::test::array;
using ratelimitd::test::integer;
using ratelimitd::test::string;

Value node(std::string host, int port, std::string id) {
    return array({string(std::move(host)), integer(port), string(std::move(id))});
}

}  // namespace

TEST(ParseClusterSlots, ReadsPrimaryOfEachRange) {
    // The shape redis 7 answers for a 3-primary cluster with one replica on the first range.
    const Value reply = array({
        array({integer(0), integer(5460), node("127.0.0.1", 7000, "a"), node("127.0.0.1", 7003, "d")}),
        array({integer(5461), integer(10922), node("127.0.0.1", 7001, "b")}),
        array({integer(10923), integer(16383), node("", 7002, "c")}),
    });
    auto ranges = parse_cluster_slots(reply, "10.0.0.9");
    ASSERT_TRUE(ranges) << ranges.error().detail;
    ASSERT_EQ(ranges->size(), 3u);
    EXPECT_EQ((*ranges)[0].first, 0);
    EXPECT_EQ((*ranges)[0].last, 5460);
    EXPECT_EQ((*ranges)[0].primary.str(), "127.0.0.1:7000");
    EXPECT_EQ((*ranges)[1].primary.str(), "127.0.0.1:7001");
    EXPECT_EQ((*ranges)[2].first, 10923);
    EXPECT_EQ((*ranges)[2].primary.str(), "10.0.0.9:7002");  // empty host: the node asked
}

TEST(ParseClusterSlots, RefusesMalformedReplies) {
    Value err;
    err.type = Value::Type::error;
    err.str = "ERR This instance has cluster support disabled";
    EXPECT_FALSE(parse_cluster_slots(err, "h"));
    EXPECT_FALSE(parse_cluster_slots(integer(1), "h"));
    EXPECT_FALSE(parse_cluster_slots(array({array({integer(0), integer(16384), node("h", 1, "x")})}), "h"));
    EXPECT_FALSE(parse_cluster_slots(array({array({integer(9), integer(3), node("h", 1, "x")})}), "h"));
    EXPECT_FALSE(parse_cluster_slots(array({array({integer(0), integer(3)})}), "h"));
    // Found by fuzz_redis_reply: a first slot beyond int was narrowed before the range check.
    EXPECT_FALSE(parse_cluster_slots(array({array({integer(8888888888888888192), integer(16383), node("h", 1, "x")})}), "h"));
    EXPECT_FALSE(parse_cluster_slots(array({array({integer((std::int64_t{1} << 32) + 5), integer(10), node("h", 1, "x")})}), "h"));
    EXPECT_FALSE(parse_cluster_slots(array({array({integer(0), integer(3), string("h")})}), "h"));
}

TEST(ParseRedirect, ReadsMovedAndAsk) {
    auto moved = parse_redirect("MOVED 3999 127.0.0.1:6381");
    EXPECT_EQ(moved.kind, Redirect::Kind::moved);
    EXPECT_EQ(moved.slot, 3999);
    EXPECT_EQ(moved.target.host, "127.0.0.1");
    EXPECT_EQ(moved.target.port, 6381);

    auto ask = parse_redirect("ASK 12 ::1:7002");
    EXPECT_EQ(ask.kind, Redirect::Kind::ask);
    EXPECT_EQ(ask.slot, 12);
    EXPECT_EQ(ask.target.host, "::1");
    EXPECT_EQ(ask.target.str(), "[::1]:7002");
}

TEST(ParseRedirect, ClassifiesTransientErrorsAndIgnoresOthers) {
    EXPECT_EQ(parse_redirect("TRYAGAIN Multiple keys request during rehashing of slot").kind,
              Redirect::Kind::try_again);
    EXPECT_EQ(parse_redirect("CLUSTERDOWN The cluster is down").kind, Redirect::Kind::cluster_down);
    EXPECT_EQ(parse_redirect("NOSCRIPT No matching script").kind, Redirect::Kind::none);
    EXPECT_EQ(parse_redirect("ERR wrong number of arguments").kind, Redirect::Kind::none);
    EXPECT_EQ(parse_redirect("MOVED 99999 127.0.0.1:1").kind, Redirect::Kind::none);  // no such slot
    EXPECT_EQ(parse_redirect("MOVED 1 nowhere").kind, Redirect::Kind::none);
    EXPECT_EQ(parse_redirect("MOVED").kind, Redirect::Kind::none);
}
