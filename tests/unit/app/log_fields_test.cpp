// split_log_message and the JSON line formatter: fields become JSON members, hostile values
// (quotes, control bytes, '=' in values) keep the line one valid JSON object.
#include "ratelimitd/app/log_fields.hpp"
#include "ratelimitd/app/logging.hpp"
#include "ratelimitd/core/log_value.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/details/log_msg.h>

namespace ratelimitd::app {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Fields fields_of(const SplitMessage& m) {
    Fields out;
    for (const auto& f : m.fields) out.emplace_back(f.key, f.value);
    return out;
}

nlohmann::json json_line(std::string_view message) {
    const auto formatter = make_log_formatter("json");
    const spdlog::details::log_msg msg("ratelimitd", spdlog::level::warn, message);
    spdlog::memory_buf_t out;
    formatter->format(msg, out);
    return nlohmann::json::parse(std::string(out.data(), out.size()));  // throws when not JSON
}

TEST(LogFields, EventTextAndFields) {
    const auto m = split_log_message(R"(store failure policy=login outcome=fail_closed error=store_timeout detail="no reply in 50 ms")");
    EXPECT_EQ(m.text, "store failure");
    EXPECT_EQ(fields_of(m), (Fields{{"policy", "login"}, {"outcome", "fail_closed"}, {"error", "store_timeout"},
                                    {"detail", "no reply in 50 ms"}}));
}

TEST(LogFields, NoFieldsKeepsTheWholeMessage) {
    const auto m = split_log_message("reload refused, the previous config keeps serving: /etc/r.yaml: bad key");
    EXPECT_EQ(m.text, "reload refused, the previous config keeps serving: /etc/r.yaml: bad key");
    EXPECT_TRUE(m.fields.empty());
    EXPECT_EQ(split_log_message("").text, "");
}

TEST(LogFields, EqualsSignsInValuesStayInTheValue) {
    const auto m = split_log_message("x url=redis://h:1/?a=b&c=d detail=\"k=v k2=v2\"");
    EXPECT_EQ(m.text, "x");
    EXPECT_EQ(fields_of(m), (Fields{{"url", "redis://h:1/?a=b&c=d"}, {"detail", "k=v k2=v2"}}));
}

TEST(LogFields, EscapedQuotesAreUnquotedOtherEscapesKept) {
    const auto m = split_log_message(R"(e detail="say \"hi\" \\ \x0a")");
    EXPECT_EQ(fields_of(m), (Fields{{"detail", R"(say "hi" \ \x0a)"}}));
}

TEST(LogFields, WordsThatAreNotFieldsStayInTextInOrder) {
    // A quoted phrase is one word even with '=' inside; an unterminated quote is text; a
    // capitalised or empty key is not a key.
    const auto m = split_log_message(R"(a "b=c d=e" Key=v =x f k="open)");
    EXPECT_EQ(m.text, R"(a "b=c d=e" Key=v =x f k="open)");
    EXPECT_TRUE(m.fields.empty());
    const auto glued = split_log_message(R"(k="a"b next=1)");  // text after the closing quote
    EXPECT_EQ(glued.text, R"(k="a"b)");
    EXPECT_EQ(fields_of(glued), (Fields{{"next", "1"}}));
}

TEST(LogFields, ReservedAndRepeatedKeysCannotOverrideTheLine) {
    const auto m = split_log_message("access policy=a msg=forged level=error ts=0 policy=b");
    EXPECT_EQ(m.text, "access msg=forged level=error ts=0 policy=b");
    EXPECT_EQ(fields_of(m), (Fields{{"policy", "a"}}));
}

TEST(LogFields, EmptyValueIsAField) {
    EXPECT_EQ(fields_of(split_log_message("e scope= tenant=t")), (Fields{{"scope", ""}, {"tenant", "t"}}));
}

TEST(LogFields, WhatLogValueWritesReadsBackAsOneField) {
    // Call sites write free text with log_value: spaces, '=', quotes and backslashes survive.
    for (const std::string text : {"plain", "two words", "k=v x=\"y\"", "back\\slash \"", "", "trailing\\"}) {
        const auto m = split_log_message("event detail=" + log_value(text) + " after=1");
        EXPECT_EQ(m.text, "event") << text;
        EXPECT_EQ(fields_of(m), (Fields{{"detail", text}, {"after", "1"}})) << text;
    }
}

TEST(JsonLogLine, FieldsAreMembers) {
    const auto line = json_line("store failure policy=login outcome=fail_closed");
    EXPECT_EQ(line["level"], "warning");
    EXPECT_EQ(line["msg"], "store failure");
    EXPECT_EQ(line["policy"], "login");
    EXPECT_EQ(line["outcome"], "fail_closed");
    EXPECT_TRUE(line.contains("ts"));
}

TEST(JsonLogLine, HostileBytesStayValidJson) {
    const std::string message = std::string("evil \"x\ny\" a=\"q\\\"\x01\x1f\x7f\" b=\\ c=tab\there") + '\0' + "z";
    const auto line = json_line(message);
    EXPECT_EQ(line["a"], std::string("q\"\x01\x1f\x7f"));
    EXPECT_EQ(line["b"], "\\");
    EXPECT_EQ(line["c"], "tab");
    EXPECT_EQ(line["msg"], std::string("evil \"x\ny\" here") + '\0' + "z");
}

TEST(JsonLogLine, TextFormatIsUnchanged) {
    const auto formatter = make_log_formatter("text");
    const spdlog::details::log_msg msg("ratelimitd", spdlog::level::info, "access policy=a tenant=t");
    spdlog::memory_buf_t out;
    formatter->format(msg, out);
    const std::string line(out.data(), out.size());
    EXPECT_NE(line.find(" info access policy=a tenant=t"), std::string::npos) << line;
}

}  // namespace
}  // namespace ratelimitd::app
