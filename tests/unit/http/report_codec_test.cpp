// parse_report_json: /v1/check's fields with a required signed cost.
#include "ratelimitd/http/report_codec.hpp"

#include <gtest/gtest.h>

namespace {

using ratelimitd::errc;
using ratelimitd::http::parse_report_json;

TEST(ReportCodec, ReadsTheCheckFieldsAndASignedCost) {
    auto r = parse_report_json(R"({"policy":"llm","tenant":"acme","scope":"chat","cost":-1350})");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    EXPECT_EQ(r->cost, -1350);
    EXPECT_EQ(r->check.policy, "llm");
    EXPECT_EQ(r->check.tenant, "acme");
    EXPECT_EQ(r->check.scope, "chat");
    EXPECT_EQ(parse_report_json(R"({"policy":"llm","tenant":"a","cost":1000000})")->cost, 1'000'000);
}

TEST(ReportCodec, RefusesAMissingOrBadCost) {
    for (const char* body : {R"({"policy":"llm","tenant":"a"})", R"({"policy":"llm","tenant":"a","cost":"5"})",
                             R"({"policy":"llm","tenant":"a","cost":1.5})",
                             R"({"policy":"llm","tenant":"a","cost":1000001})",
                             R"({"policy":"llm","tenant":"a","cost":0})", R"({"policy":"llm","tenant":"a","cost":-0})",
                             R"({"policy":"llm","tenant":"a","cost":-1000001})",
                             R"({"policy":"llm","tenant":"a","cost":18446744073709551615})"}) {
        auto r = parse_report_json(body);
        ASSERT_FALSE(r.has_value()) << body;
        EXPECT_EQ(r.error().code, errc::invalid_cost) << body;
        EXPECT_NE(r.error().detail.find("cost"), std::string::npos) << r.error().detail;
    }
}

TEST(ReportCodec, RefusesWhatIsNotAJsonObjectAndBadCheckFields) {
    EXPECT_EQ(parse_report_json("not json").error().code, errc::invalid_request);
    EXPECT_EQ(parse_report_json("[1]").error().code, errc::invalid_request);
    EXPECT_FALSE(parse_report_json(R"({"policy":5,"tenant":"a","cost":1})").has_value());
}

}  // namespace

namespace {

// cost 0 charged nothing and answered the tenant's state to anyone: refused, saying why.
TEST(ReportCodec, CostZeroIsRefusedSayingItChargesNothing) {
    auto r = parse_report_json(R"({"policy":"llm","tenant":"a","cost":0})");
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::invalid_cost);
    EXPECT_NE(r.error().detail.find("0 charges nothing"), std::string::npos) << r.error().detail;
}

// One reader with /v1/check: a field given twice is refused, never "the last one wins"
// ("cost":1,"cost":-5 was a refund; "tenant" twice charged the last one).
TEST(ReportCodec, AFieldGivenTwiceIsRefusedNamingIt) {
    const std::pair<const char*, const char*> cases[] = {
        {R"({"policy":"llm","tenant":"a","cost":1,"cost":-5})", "cost: given more than once"},
        {R"({"policy":"llm","tenant":"a","tenant":"b","cost":1})", "tenant: given more than once"},
        {R"({"policy":"llm","policy":"x","tenant":"a","cost":1})", "policy: given more than once"},
        {R"({"scope":"s","tenant":"a","cost":-1,"scope":"t"})", "scope: given more than once"},
    };
    for (const auto& [body, detail] : cases) {
        auto r = parse_report_json(body);
        ASSERT_FALSE(r.has_value()) << body;
        EXPECT_EQ(r.error().code, errc::invalid_request) << body;
        EXPECT_EQ(r.error().detail, detail) << body;
    }
}

}  // namespace
