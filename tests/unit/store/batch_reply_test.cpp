// batch_element: how one call's reply is shared out among the checks it carried.
#include "ratelimitd/store/redis/verdict_reply.hpp"

#include <gtest/gtest.h>

#include <iterator>

namespace ratelimitd::store::redis {
namespace {

Value integer(std::int64_t n) {
    Value v;
    v.type = Value::Type::integer;
    v.integer = n;
    return v;
}

Value error(std::string text) {
    Value v;
    v.type = Value::Type::error;
    v.str = std::move(text);
    return v;
}

Value array(std::vector<Value> elements) {
    Value v;
    v.type = Value::Type::array;
    v.elements.assign(std::make_move_iterator(elements.begin()), std::make_move_iterator(elements.end()));
    return v;
}

TEST(BatchReply, EachCheckGetsItsOwnElement) {
    result<Value> reply = array({integer(1), integer(2)});
    EXPECT_EQ(batch_element(reply, 2, 1)->integer, 2);
    EXPECT_EQ(batch_element(reply, 2, 0)->integer, 1);
}

TEST(BatchReply, ALoneChecksReplyIsTheScriptsOwn) {
    result<Value> reply = error("MOVED 3999 127.0.0.1:7001");
    auto one = batch_element(reply, 1, 0);
    ASSERT_TRUE(one.has_value()) << "a redirect stays a Value for the cluster to follow";
    EXPECT_EQ(one->str, "MOVED 3999 127.0.0.1:7001");
}

TEST(BatchReply, AnErrorOfTheWholeCallIsEveryones) {
    result<Value> reply = error("READONLY You can't write against a read only replica.");
    for (std::size_t i = 0; i < 3; ++i) {
        auto r = batch_element(reply, 3, i);
        ASSERT_TRUE(r.has_value());
        EXPECT_TRUE(r->is_error());
    }
}

TEST(BatchReply, AFailureOfTheCallIsEveryones) {
    result<Value> reply = Problem{errc::store_timeout, "redis did not answer in time"};
    EXPECT_EQ(batch_element(reply, 2, 1).error().code, errc::store_timeout);
}

TEST(BatchReply, AChecksOwnErrorIsABadReplyNotARedirect) {
    result<Value> reply = array({integer(1), error("MOVED 1 127.0.0.1:7001")});
    auto r = batch_element(reply, 2, 1);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::bad_script_reply);
}

TEST(BatchReply, TheWrongNumberOfElementsIsABadReply) {
    result<Value> reply = array({integer(1)});
    EXPECT_EQ(batch_element(reply, 2, 0).error().code, errc::bad_script_reply);
}

}  // namespace
}  // namespace ratelimitd::store::redis
