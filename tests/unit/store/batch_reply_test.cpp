// FlatReply: how lua/batch.lua's flat reply is shared out among the checks it carried, each
// rebuilt as its algorithm's own script would have answered it alone.
#include "ratelimitd/store/redis/flat_reply.hpp"

#include "ratelimitd/store/redis/value_reader.hpp"
#include "ratelimitd/store/redis/verdict_reply.hpp"

#include "unit/store/reply_values.hpp"

#include <gtest/gtest.h>

#include <iterator>
#include <vector>

namespace ratelimitd::store::redis {
namespace {

using ratelimitd::test::array;
using ratelimitd::test::error;
using ratelimitd::test::integer;

Value integers(const std::vector<std::int64_t>& numbers) {
    std::vector<Value> elements;
    for (const auto n : numbers) elements.push_back(integer(n));
    return array(std::move(elements));
}

std::vector<std::int64_t> numbers_of(const result<Value>& v) {
    std::vector<std::int64_t> out;
    if (!v) return out;
    EXPECT_EQ(v->type, Value::Type::integers);  // a check's reply is handed on read flat
    EXPECT_TRUE(v->elements.empty());
    return {v->integers.begin(), v->integers.end()};
}

using Numbers = std::vector<std::int64_t>;

// The time 1,700,000,000,250 ms: reset_epoch_s is ceil((time + reset_after_ms) / 1000).
TEST(BatchReply, EachCheckGetsTheScriptsSevenNumbersBack) {
    const result<Value> reply = integers({1'700'000'000'250, 1, 4, 750, 0, 0, 30'001, 1, 9, 0});
    const FlatReply flat(reply, 3);
    // allowed, limit, remaining, reset_epoch_s, retry_after_s, reset_after_s, reset_after_ms
    EXPECT_EQ(numbers_of(flat.element(0, 5)), (Numbers{1, 5, 4, 1'700'000'001, 0, 1, 750}));
    EXPECT_EQ(numbers_of(flat.element(1, 10)), (Numbers{0, 10, 0, 1'700'000'031, 31, 31, 30'001}));
    // nothing to wait for: reset now, in the second holding now
    EXPECT_EQ(numbers_of(flat.element(2, 9)), (Numbers{1, 9, 9, 1'700'000'001, 0, 0, 0}));
}

// A denial's Retry-After is at least 1 s, even when the reset is this millisecond.
TEST(BatchReply, ADenialWaitsAtLeastOneSecond) {
    const result<Value> reply = integers({2'000, 0, 0, 0});
    EXPECT_EQ(numbers_of(FlatReply(reply, 1).element(0, 3)), (Numbers{0, 3, 0, 2, 1, 0, 0}));
}

TEST(BatchReply, CeilingRoundsTowardsPositiveInfinity) {
    EXPECT_EQ(FlatReply::ceil_div(1, 1000), 1);
    EXPECT_EQ(FlatReply::ceil_div(1000, 1000), 1);
    EXPECT_EQ(FlatReply::ceil_div(1001, 1000), 2);
    EXPECT_EQ(FlatReply::ceil_div(0, 1000), 0);
    EXPECT_EQ(FlatReply::ceil_div(-1, 1000), 0);
    EXPECT_EQ(FlatReply::ceil_div(-1001, 1000), -1);
}

// The rebuilt reply reads as a lone check's: the same window, field for field.
TEST(BatchReply, TheRebuiltReplyParsesAsTheScriptsOwn) {
    policy::Policy p;
    p.name = "api";
    p.limit = 10;
    p.window = std::chrono::milliseconds(60'000);
    const result<Value> reply = integers({1'700'000'000'250, 0, 0, 1'500});
    const auto flat = parse_verdict(*FlatReply(reply, 1).element(0, p.limit), p);
    const auto alone = parse_verdict(integers({0, 10, 0, 1'700'000'002, 2, 2, 1'500}), p);
    ASSERT_TRUE(flat.has_value());
    ASSERT_TRUE(alone.has_value());
    const auto& a = flat->windows.front();
    const auto& b = alone->windows.front();
    EXPECT_EQ(flat->allowed, alone->allowed);
    EXPECT_EQ(std::tie(a.limit, a.remaining, a.reset_epoch_s, a.retry_after_s, a.reset_after_s, a.reset_after_ms),
              std::tie(b.limit, b.remaining, b.reset_epoch_s, b.retry_after_s, b.reset_after_s, b.reset_after_ms));
}

// parse_verdict reads a flat array (FlatReply::element's) as it reads an array of integers;
// a member of one that is no integer (kept apart, at its position) is a bad reply.
TEST(BatchReply, AFlatReplyParsesAsAnArrayOfIntegers) {
    policy::Policy p;
    p.limit = 10;
    Value flat;
    flat.type = Value::Type::integers;
    flat.integers.assign({1, 10, 9, 1'700'000'001, 0, 1, 750});
    const auto read = parse_verdict(flat, p);
    ASSERT_TRUE(read.has_value());
    EXPECT_TRUE(read->allowed);
    EXPECT_EQ(read->windows.front().remaining, 9);
    EXPECT_EQ(read->windows.front().reset_after_ms, 750);
    Value holed = flat;
    holed.elements.push_back(error("ERR WRONGTYPE"));
    holed.elements.back().integer = 2;
    const auto bad = parse_verdict(holed, p);
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().code, errc::bad_script_reply);
    flat.integers.pop_back();
    EXPECT_FALSE(parse_verdict(flat, p).has_value()) << "six numbers";
}

// A quota webhook's claimed crossings follow the fixed part: index, count, values (the window's
// end, the script's clock, the positions).
TEST(BatchReply, ACheckWithExtrasGetsThemAfterItsSeven) {
    const result<Value> reply = integers({1'000, 1, 1, 500, 1, 0, 500, 2, 4, 61'000, 1'999, 1, 2});
    const FlatReply flat(reply, 2);
    EXPECT_EQ(numbers_of(flat.element(0, 2)), (Numbers{1, 2, 1, 2, 0, 1, 500}));
    EXPECT_EQ(numbers_of(flat.element(1, 2)), (Numbers{1, 2, 0, 2, 0, 1, 500, 61'000, 1'999, 1, 2}));
    policy::Policy p;
    p.limit = 2;
    const auto verdict = parse_verdict(*flat.element(1, 2), p);
    ASSERT_TRUE(verdict.has_value());
    EXPECT_EQ(verdict->windows.front().window_end_ms, 61'000);
    EXPECT_EQ(verdict->windows.front().crossed_at_s, 1u) << "1,999 ms, rounded down";
    EXPECT_EQ(verdict->windows.front().crossed, 0b11);
}

// A report's reply may claim thresholds and its debt bound at once: the positions, then 0 and
// the debt (lua/notify/crossings.lua's notify_report).
TEST(BatchReply, AReportsThresholdsAndDebtAreReadTogether) {
    policy::Policy p;
    p.limit = 10;
    const auto both = parse_verdict(integers({1, 10, 0, 1, 0, 1, 500, 61'000, 60'500, 2, 0, 22}), p);
    ASSERT_TRUE(both.has_value());
    EXPECT_EQ(both->windows.front().crossed, 0b10);
    EXPECT_EQ(both->windows.front().debt_passed, 22);
    const auto debt_only = parse_verdict(integers({1, 10, 0, 1, 0, 1, 500, 61'000, 60'500, 0, 22}), p);
    ASSERT_TRUE(debt_only.has_value());
    EXPECT_EQ(debt_only->windows.front().crossed, 0);
    EXPECT_EQ(debt_only->windows.front().debt_passed, 22);
    EXPECT_FALSE(parse_verdict(integers({1, 10, 0, 1, 0, 1, 500, 61'000, 60'500}), p).has_value())
        << "a window end and a time but nothing claimed";
    EXPECT_FALSE(parse_verdict(integers({1, 10, 0, 1, 0, 1, 500, 61'000, 60'500, 0, 0}), p).has_value())
        << "a debt of 0 passed no bound";
}

// The connection reads lua/batch.lua's reply flat (Value::Type::integers): shared out the same,
// a check's error among the integers included.
TEST(BatchReply, AReplyReadFlatIsSharedOutAsAnArrayIs) {
    ValueReader reader;
    reader.expect_integers(true);
    const std::string wire = "*10\r\n:1700000000250\r\n:1\r\n:4\r\n:750\r\n-ERR WRONGTYPE\r\n:0\r\n:0\r\n"
                             ":0\r\n:0\r\n:30001\r\n";
    ASSERT_TRUE(reader.feed(wire.data(), wire.size()));
    Value v;
    ASSERT_EQ(reader.next(v), ValueReader::Status::reply);
    ASSERT_EQ(v.type, Value::Type::integers);
    const result<Value> reply = std::move(v);
    const FlatReply flat(reply, 3);
    EXPECT_EQ(numbers_of(flat.element(0, 5)), (Numbers{1, 5, 4, 1'700'000'001, 0, 1, 750}));
    const auto failed = flat.element(1, 5);
    ASSERT_FALSE(failed.has_value());
    EXPECT_EQ(failed.error().detail, "redis error: ERR WRONGTYPE");
    EXPECT_EQ(numbers_of(flat.element(2, 10)), (Numbers{0, 10, 0, 1'700'000'031, 31, 31, 30'001}));
}

TEST(BatchReply, AnErrorOfTheWholeCallIsEveryones) {
    const result<Value> reply = error("READONLY You can't write against a read only replica.");
    const FlatReply flat(reply, 3);
    for (std::size_t i = 0; i < 3; ++i) {
        auto r = flat.element(i, 5);
        ASSERT_TRUE(r.has_value()) << "a redirect stays a Value for the cluster to follow";
        EXPECT_TRUE(r->is_error());
        EXPECT_EQ(r->str, reply->str);
    }
}

TEST(BatchReply, AFailureOfTheCallIsEveryones) {
    const result<Value> reply = Problem{errc::store_timeout, "redis did not answer in time"};
    EXPECT_EQ(FlatReply(reply, 2).element(1, 5).error().code, errc::store_timeout);
}

TEST(BatchReply, AChecksOwnErrorIsABadReplyNotARedirectAndTheOthersStand) {
    const result<Value> reply = array({integer(1'000), integer(1), integer(4), integer(0),
                                       error("MOVED 1 127.0.0.1:7001"), integer(0), integer(0)});
    const FlatReply flat(reply, 2);
    auto r = flat.element(1, 5);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::bad_script_reply);
    EXPECT_NE(r.error().detail.find("MOVED 1"), std::string::npos) << r.error().detail;
    EXPECT_EQ(numbers_of(flat.element(0, 5)), (Numbers{1, 5, 4, 1, 0, 0, 0}));
}

TEST(BatchReply, AnyOtherShapeIsABadReplyForEveryCheck) {
    const std::vector<Value> wrong{
        integers({1'000, 1, 4}),                          // too short for two checks
        integers({1'000, 1, 4, 0, 1, 4, 0, 3, 1, 7}),     // extras of check 3 of 2
        integers({1'000, 1, 4, 0, 1, 4, 0, 1, 5, 7}),     // more extras announced than sent
        integers({1'000, 1, 4, 0, 1, 4, 0, 1}),           // an index without its count
        integer(1),                                       // no array
        array({integer(1'000), integer(1), error("x"), integer(0), integer(1), integer(4), integer(0)}),
        array({array({}), integer(1), integer(4), integer(0), integer(1), integer(4), integer(0)}),
    };
    for (const auto& w : wrong) {
        const result<Value> reply = w;
        const FlatReply flat(reply, 2);
        EXPECT_EQ(flat.element(0, 5).error().code, errc::bad_script_reply);
        EXPECT_EQ(flat.element(1, 5).error().code, errc::bad_script_reply);
    }
}

}  // namespace
}  // namespace ratelimitd::store::redis
