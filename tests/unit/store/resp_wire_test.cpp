// The wire both ways: append_command's RESP and ValueReader's Values, byte for byte.
#include "ratelimitd/store/redis/resp_command.hpp"
#include "ratelimitd/store/redis/value_reader.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {
namespace {

TEST(RespCommand, HeadThenTailAsBulkStrings) {
    const std::vector<std::string> tail{"1", "rl:{api:t1}", ""};
    std::string out;
    append_command(out, {"EVALSHA", "abc"}, tail);
    EXPECT_EQ(out, "*5\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n$1\r\n1\r\n$11\r\nrl:{api:t1}\r\n$0\r\n\r\n");
}

TEST(RespCommand, AppendsAfterWhatIsThereAndKeepsBinaryBytes) {
    std::string out = "*1\r\n$4\r\nPING\r\n";
    const std::vector<std::string> tail{std::string("a\0\r\nb", 5)};
    append_command(out, {"SET"}, tail);
    constexpr char expected[] = "*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nSET\r\n$5\r\na\0\r\nb\r\n";
    EXPECT_EQ(out, std::string(expected, sizeof expected - 1));
}

TEST(RespCommand, LongArgumentsCarryTheirWholeLength) {
    const std::vector<std::string> tail{std::string(70000, 'x')};
    std::string out;
    append_command(out, {}, tail);
    EXPECT_EQ(out.substr(0, 13), "*1\r\n$70000\r\nx");
    EXPECT_EQ(out.size(), 4 + 8 + 70000 + 2u);
}

TEST(RespCommand, NumbersAreBulkStringsOfTheirDigits) {
    std::string out;
    append_array_header(out, 4);
    append_bulk(out, std::int64_t{0});
    append_bulk(out, std::int64_t{-42});
    append_bulk(out, std::numeric_limits<std::int64_t>::min());
    append_bulk(out, std::string_view("x"));
    EXPECT_EQ(out, "*4\r\n$1\r\n0\r\n$3\r\n-42\r\n$20\r\n-9223372036854775808\r\n$1\r\nx\r\n");
}

TEST(ValueReader, ReadsEveryTypeNestedInOrder) {
    ValueReader reader;
    const std::string wire = "*4\r\n:42\r\n$3\r\nabc\r\n*2\r\n+OK\r\n$-1\r\n-ERR nope\r\n:-7\r\n";
    ASSERT_TRUE(reader.feed(wire.data(), wire.size()));
    Value v;
    ASSERT_EQ(reader.next(v), ValueReader::Status::reply);
    ASSERT_EQ(v.type, Value::Type::array);
    ASSERT_EQ(v.elements.size(), 4u);
    EXPECT_EQ(v.elements[0].integer, 42);
    EXPECT_EQ(v.elements[1].type, Value::Type::string);
    EXPECT_EQ(v.elements[1].str, "abc");
    ASSERT_EQ(v.elements[2].elements.size(), 2u);
    EXPECT_EQ(v.elements[2].elements[0].type, Value::Type::status);
    EXPECT_EQ(v.elements[2].elements[0].str, "OK");
    EXPECT_EQ(v.elements[2].elements[1].type, Value::Type::nil);
    EXPECT_TRUE(v.elements[3].is_error());
    EXPECT_EQ(v.elements[3].str, "ERR nope");
    ASSERT_EQ(reader.next(v), ValueReader::Status::reply);
    EXPECT_EQ(v.type, Value::Type::integer);
    EXPECT_EQ(v.integer, -7);
    EXPECT_EQ(reader.next(v), ValueReader::Status::incomplete);
}

// A batch reply arrives in pieces: nothing until the last byte, then the whole of it.
TEST(ValueReader, AReplySplitAnywhereIsReadWhole) {
    std::string wire = "*300\r\n";
    for (int i = 0; i < 300; ++i) wire += "*2\r\n:" + std::to_string(i) + "\r\n:1\r\n";
    for (std::size_t cut = 1; cut < wire.size(); cut += 97) {
        ValueReader reader;
        Value v;
        ASSERT_TRUE(reader.feed(wire.data(), cut));
        EXPECT_EQ(reader.next(v), ValueReader::Status::incomplete) << cut;
        ASSERT_TRUE(reader.feed(wire.data() + cut, wire.size() - cut));
        ASSERT_EQ(reader.next(v), ValueReader::Status::reply) << cut;
        ASSERT_EQ(v.elements.size(), 300u);
        EXPECT_EQ(v.elements[299].elements[0].integer, 299);
    }
}

// A header promising two billion members costs nothing until members arrive.
TEST(ValueReader, AHugeArrayHeaderAllocatesNothingAhead) {
    ValueReader reader;
    const std::string wire = "*2000000000\r\n:1\r\n";
    ASSERT_TRUE(reader.feed(wire.data(), wire.size()));
    Value v;
    EXPECT_EQ(reader.next(v), ValueReader::Status::incomplete);
}

TEST(ValueReader, BytesThatAreNotTheProtocolAreNamedMalformed) {
    ValueReader reader;
    const std::string wire = "?what\r\n";
    ASSERT_TRUE(reader.feed(wire.data(), wire.size()));
    Value v;
    EXPECT_EQ(reader.next(v), ValueReader::Status::malformed);
    EXPECT_NE(reader.error().find("Protocol error"), std::string::npos) << reader.error();
}

TEST(ValueReader, WhatAppendCommandWritesReadsBackAsItsArguments) {
    const std::vector<std::string> tail{"k", std::string("\0\xff", 2), ""};
    std::string wire;
    append_command(wire, {"EVAL", "return 1"}, tail);
    ValueReader reader;
    ASSERT_TRUE(reader.feed(wire.data(), wire.size()));
    Value v;
    ASSERT_EQ(reader.next(v), ValueReader::Status::reply);
    ASSERT_EQ(v.elements.size(), 5u);
    EXPECT_EQ(v.elements[0].str, "EVAL");
    EXPECT_EQ(v.elements[1].str, "return 1");
    EXPECT_EQ(v.elements[3].str, std::string("\0\xff", 2));
    EXPECT_EQ(v.elements[4].str, "");
}

}  // namespace
}  // namespace ratelimitd::store::redis
