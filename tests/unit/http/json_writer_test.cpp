// JsonWriter must write what nlohmann::json::dump() writes for the same document, since the
// check answers moved from one to the other and clients compare bodies byte for byte.
#include "ratelimitd/http/json_writer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ratelimitd::http {
namespace {

using ordered_json = nlohmann::ordered_json;

std::string dumped(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

TEST(JsonWriter, WritesTheSameBytesAsNlohmannForANestedAnswer) {
    JsonWriter w;
    w.begin_object();
    w.key("allowed").boolean(false);
    w.key("policy").string("api");
    w.key("reset").null();
    w.key("limit").number(std::numeric_limits<std::int64_t>::min());
    w.key("windows").begin_array();
    w.begin_object().key("a").number(1).end_object();
    w.begin_object().key("b").number(2).key("c").boolean(true).end_object();
    w.end_array();
    w.key("empty").begin_array().end_array();
    w.key("none").begin_object().end_object();
    w.end_object();

    ordered_json j = ordered_json::object();
    j["allowed"] = false;
    j["policy"] = "api";
    j["reset"] = nullptr;
    j["limit"] = std::numeric_limits<std::int64_t>::min();
    j["windows"] = ordered_json::array({ordered_json{{"a", 1}}, ordered_json{{"b", 2}, {"c", true}}});
    j["empty"] = ordered_json::array();
    j["none"] = ordered_json::object();
    EXPECT_EQ(std::string_view(w.take()), dumped(j));
}

TEST(JsonWriter, EscapesEveryStringAsNlohmannDoes) {
    static constexpr char with_nul[] = "nul\0 x01\x01 x1f\x1f del\x7f";
    std::vector<std::string> samples = {"", "plain", "quote\" backslash\\ slash/", "tab\t nl\n cr\r bs\b ff\f",
                                        std::string(with_nul, sizeof with_nul - 1), "caf\xc3\xa9",
                                        "bad \xff utf-8 \xc3", "\xe2\x82\xac euro"};
    for (const auto& s : samples) {
        JsonWriter w;
        w.string(s);
        EXPECT_EQ(std::string_view(w.take()), dumped(ordered_json(s))) << s;
    }
}

TEST(JsonWriter, ALiteralKeyIsWrittenAsTheEscapedOneIs) {
    // Literal keys skip the escaping (they are plain); the bytes must be the same.
    JsonWriter literal;
    literal.begin_object().key("allowed").boolean(true).key("retry_after").number(3).end_object();
    JsonWriter escaped;
    escaped.begin_object();
    escaped.key(std::string_view("allowed")).boolean(true).key(std::string_view("retry_after")).number(3);
    escaped.end_object();
    constexpr std::string_view expected = R"({"allowed":true,"retry_after":3})";
    EXPECT_EQ(std::string_view(literal.take()), expected);
    EXPECT_EQ(std::string_view(escaped.take()), expected);
}

TEST(JsonWriter, RefusesNestingDeeperThanItsLimit) {
    JsonWriter w;
    for (std::size_t i = 0; i < JsonWriter::max_depth; ++i) w.begin_array();
    EXPECT_THROW(w.begin_array(), std::length_error);
}

}  // namespace
}  // namespace ratelimitd::http
