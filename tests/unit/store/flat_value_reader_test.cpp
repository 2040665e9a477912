// ValueReader::expect_integers: lua/batch.lua's reply read flat, its integers 8 bytes each in
// one vector, the rare other member (a check's error) kept aside with its position.
#include "ratelimitd/store/redis/value_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ratelimitd::store::redis {
namespace {

using Integers = std::vector<std::int64_t>;

Integers integers_of(const Value& v) { return Integers(v.integers.begin(), v.integers.end()); }

Value read_one(const std::string& wire, bool flat) {
    ValueReader reader;
    reader.expect_integers(flat);
    EXPECT_TRUE(reader.feed(wire.data(), wire.size()));
    Value v;
    EXPECT_EQ(reader.next(v), ValueReader::Status::reply);
    return v;
}

TEST(FlatValueReader, AnArrayOfIntegersIsOneVectorNoValuePerMember) {
    const Value v = read_one("*4\r\n:1700000000250\r\n:1\r\n:-3\r\n:750\r\n", true);
    EXPECT_EQ(v.type, Value::Type::integers);
    EXPECT_EQ(integers_of(v), (Integers{1'700'000'000'250, 1, -3, 750}));
    EXPECT_TRUE(v.elements.empty());
}

TEST(FlatValueReader, AMemberThatIsNoIntegerIsKeptAsideWithItsPosition) {
    const Value v = read_one("*5\r\n:1000\r\n-ERR WRONGTYPE\r\n:0\r\n*2\r\n:7\r\n$1\r\nx\r\n:9\r\n", true);
    ASSERT_EQ(v.type, Value::Type::integers);
    EXPECT_EQ(integers_of(v), (Integers{1'000, 0, 0, 0, 9})) << "0 where the others stand";
    ASSERT_EQ(v.elements.size(), 2u);
    EXPECT_TRUE(v.elements[0].is_error());
    EXPECT_EQ(v.elements[0].str, "ERR WRONGTYPE");
    EXPECT_EQ(v.elements[0].integer, 1);
    EXPECT_EQ(v.elements[1].type, Value::Type::array) << "a nested array is read as usual";
    EXPECT_EQ(v.elements[1].integer, 3);
    ASSERT_EQ(v.elements[1].elements.size(), 2u);
    EXPECT_EQ(v.elements[1].elements[0].integer, 7);
    EXPECT_EQ(v.elements[1].elements[1].str, "x");
}

// A call's error (NOSCRIPT, READONLY, MOVED) is what it is whatever was expected.
TEST(FlatValueReader, AReplyThatIsNoArrayIsReadAsUsual) {
    const Value e = read_one("-NOSCRIPT No matching script\r\n", true);
    EXPECT_TRUE(e.is_error());
    EXPECT_EQ(e.str, "NOSCRIPT No matching script");
    EXPECT_EQ(read_one(":5\r\n", true).integer, 5);
}

// Each reply is read as the command it answers asked: the connection says so before next().
TEST(FlatValueReader, OnlyTheRepliesExpectedFlatAreReadFlat) {
    ValueReader reader;
    const std::string wire = "*2\r\n:1\r\n:2\r\n*2\r\n:3\r\n:4\r\n*1\r\n:5\r\n";
    ASSERT_TRUE(reader.feed(wire.data(), wire.size()));
    Value v;
    reader.expect_integers(true);
    ASSERT_EQ(reader.next(v), ValueReader::Status::reply);
    EXPECT_EQ(v.type, Value::Type::integers);
    EXPECT_EQ(integers_of(v), (Integers{1, 2}));
    reader.expect_integers(false);
    ASSERT_EQ(reader.next(v), ValueReader::Status::reply);
    ASSERT_EQ(v.type, Value::Type::array);
    ASSERT_EQ(v.elements.size(), 2u);
    EXPECT_EQ(v.elements[1].integer, 4);
    EXPECT_TRUE(v.integers.empty());
    reader.expect_integers(true);
    ASSERT_EQ(reader.next(v), ValueReader::Status::reply);
    EXPECT_EQ(integers_of(v), (Integers{5}));
}

// A batch reply arrives in pieces: nothing until the last byte, then the whole of it.
TEST(FlatValueReader, AFlatReplySplitAnywhereIsReadWhole) {
    std::string wire = "*193\r\n";
    for (int i = 0; i < 193; ++i) wire += ":" + std::to_string(i * 1000) + "\r\n";
    for (std::size_t cut = 1; cut < wire.size(); cut += 61) {
        ValueReader reader;
        reader.expect_integers(true);
        Value v;
        ASSERT_TRUE(reader.feed(wire.data(), cut));
        EXPECT_EQ(reader.next(v), ValueReader::Status::incomplete) << cut;
        ASSERT_TRUE(reader.feed(wire.data() + cut, wire.size() - cut));
        ASSERT_EQ(reader.next(v), ValueReader::Status::reply) << cut;
        ASSERT_EQ(v.integers.size(), 193u);
        EXPECT_EQ(v.integers[192], 192'000);
    }
}

// A header promising two billion members reserves a bounded first guess only.
TEST(FlatValueReader, AHugeArrayHeaderReservesABoundedGuess) {
    ValueReader reader;
    reader.expect_integers(true);
    const std::string wire = "*2000000000\r\n:1\r\n";
    ASSERT_TRUE(reader.feed(wire.data(), wire.size()));
    Value v;
    EXPECT_EQ(reader.next(v), ValueReader::Status::incomplete);
}

}  // namespace
}  // namespace ratelimitd::store::redis
