// read_flat_object takes the flat shape and nothing else; parse_check_json answers the same
// whichever way it reads a body.
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/flat_json.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string_view>

namespace ratelimitd::http {
namespace {

std::optional<std::size_t> flat(std::string_view body, std::array<FlatMember, 4>& out) {
    return read_flat_object(body, out);
}

TEST(FlatJson, ReadsStringsAndIntegersInOrder) {
    std::array<FlatMember, 4> m;
    const auto n = flat(" {\"policy\" : \"api\",\n\"cost\":12,\t\"tenant\":\"t-1\"} ", m);
    ASSERT_EQ(n, 3u);
    EXPECT_EQ(m[0].key, "policy");
    EXPECT_EQ(m[0].value, "api");
    EXPECT_TRUE(m[0].is_string);
    EXPECT_EQ(m[1].key, "cost");
    EXPECT_FALSE(m[1].is_string);
    EXPECT_EQ(m[1].number, 12u);
    EXPECT_EQ(m[2].value, "t-1");
}

TEST(FlatJson, AnEmptyObjectHasNoMembers) {
    std::array<FlatMember, 4> m;
    EXPECT_EQ(flat("{}", m), 0u);
    EXPECT_EQ(flat(" { } ", m), 0u);
}

TEST(FlatJson, LeavesEverythingElseToTheGeneralParser) {
    std::array<FlatMember, 4> m;
    for (const std::string_view body : {
             "", "[]", "\"x\"", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,}", "{\"a\":1}x", "{\"a\":1}{}",
             "{\"a\":\"b\\\"c\"}",        // an escape
             "{\"a\\u0061\":1}",          // an escape in a key
             "{\"a\":\"\xc3\xa9\"}",      // non-ASCII (UTF-8 validity is the general parser's)
             "{\"a\":\"tab\there\"}",     // a control byte
             "{\"a\":01}", "{\"a\":-1}", "{\"a\":1.5}", "{\"a\":1e3}", "{\"a\":1E3}", "{\"a\":1x}",
             "{\"a\":1234567890123456789}",  // 19 digits
             "{\"a\":true}", "{\"a\":null}", "{\"a\":{}}", "{\"a\":[]}",
             "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5}",  // more members than room
             "\xef\xbb\xbf{\"a\":1}",     // a byte order mark
             "{\"a\":\"unterminated}",
         }) {
        EXPECT_EQ(flat(body, m), std::nullopt) << body;
    }
}

void expect_same(std::string_view body) {
    const auto fast = parse_check_json(body);
    const auto general = parse_check_json_general(body);
    ASSERT_EQ(fast.has_value(), general.has_value()) << body;
    if (!fast) {
        EXPECT_EQ(fast.error().code, general.error().code) << body;
        EXPECT_EQ(fast.error().detail, general.error().detail) << body;
        return;
    }
    EXPECT_EQ(fast->policy, general->policy) << body;
    EXPECT_EQ(fast->tenant, general->tenant) << body;
    EXPECT_EQ(fast->scope, general->scope) << body;
    EXPECT_EQ(fast->cost, general->cost) << body;
    EXPECT_EQ(fast->method, general->method) << body;
    EXPECT_EQ(fast->path, general->path) << body;
    EXPECT_EQ(fast->plan, general->plan) << body;
}

TEST(FlatJson, ACheckBodyParsesTheSameEitherWay) {
    for (const std::string_view body : {
             R"({"policy":"bench","tenant":"t1"})",
             R"({"tenant":"t1","scope":"s","cost":5,"plan":"gold","method":"GET","path":"/x"})",
             R"({"tenant":"t1","extra":"ignored","n":7})",
             R"({"tenant":"t1","tenant":"t2"})",   // repeated: an error, worded once
             R"({"tenant":"t1","cost":0})", R"({"tenant":"t1","cost":1000001})", R"({"tenant":"t1","cost":"5"})",
             R"({"tenant":5})", R"({"policy":"p"})", R"({})", R"({"tenant":""})",
             R"({"tenant":"t1","cost":1.0})", R"({"tenant":"a\"b"})", "{\"tenant\":\"t1\"} x",
         }) {
        expect_same(body);
    }
}

TEST(FlatJson, TheFlatShapeIsReadWithoutTheGeneralParser) {
    // Not observable through the result (it is the same), so through what each accepts:
    // the flat reader takes a real check body whole.
    std::array<FlatMember, 4> m;
    EXPECT_EQ(flat(R"({"policy":"bench","tenant":"t1","cost":1})", m), 3u);
}

// A refund's body (a report with a negative cost) is read whole by the flat reader too, so
// it is read once; the default still leaves every sign to the general parser.
TEST(FlatJson, ASignedReadTakesARefundBodyWhole) {
    std::array<FlatMember, 4> m;
    EXPECT_EQ(read_flat_object(R"({"policy":"llm","tenant":"t1","cost":-1350})", m, FlatSigns::allowed), 3u);
    EXPECT_TRUE(m[2].negative);
    EXPECT_EQ(m[2].number, 1350u);
    EXPECT_EQ(read_flat_object(R"({"cost":7})", m, FlatSigns::allowed), 1u);
    EXPECT_FALSE(m[0].negative);
    EXPECT_EQ(flat(R"({"cost":-1350})", m), std::nullopt);
    for (const std::string_view body : {"{\"a\":-0}", "{\"a\":-01}", "{\"a\":-}", "{\"a\":--1}", "{\"a\":-1.5}",
                                        "{\"a\":- 1}", "{\"a\":-1234567890123456789}"}) {
        EXPECT_EQ(read_flat_object(body, m, FlatSigns::allowed), std::nullopt) << body;
    }
    auto report = parse_body_json(R"({"tenant":"t1","cost":-1350})", BodyKind::report);
    ASSERT_TRUE(report.has_value());
    EXPECT_EQ(report->cost, -1350);
}

}  // namespace
}  // namespace ratelimitd::http
