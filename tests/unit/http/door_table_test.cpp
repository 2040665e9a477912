// The door table: every endpoint (and the gRPC service) says what a call can do and who may,
// the operator's capabilities are never open to anyone, and docs/security.md shows every row
// with the same Redis bound. The one JSON body reader refuses a field given twice on every door.
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/road/door.hpp"
#include "ratelimitd/http/endpoints.hpp"
#include "ratelimitd/http/request_tokens.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace ratelimitd::http {
namespace {

std::string security_doc() {
    std::ifstream in(std::string(RATELIMITD_TEST_DATA_DIR) + "/../../docs/security.md");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(DoorTable, EveryRowChoosesWhoMayAndOperatorActsAreNeverOpen) {
    for (const Endpoint& e : endpoint_table()) {
        SCOPED_TRACE(e.path);
        EXPECT_TRUE(chose_access(e.door.who));
        EXPECT_FALSE(e.door.redis_work.empty());
        if ((e.door.can & (can::read_state | can::change_shared | can::read_settings)) != 0) {
            EXPECT_EQ(e.door.who, Access::admin);
        }
        if ((e.door.can & can::give_back) != 0) {
            EXPECT_NE(e.door.who, Access::anyone);
        }
    }
}

TEST(DoorTable, TheDoorsThatGiveUnitsBackAreTheAdminOnesAndTheLeaseHolder) {
    std::string giving;
    for (const Endpoint& e : endpoint_table()) {
        if ((e.door.can & can::give_back) != 0) giving += std::string(e.path) + " ";
    }
    EXPECT_EQ(giving, "/v1/report /v1/reset /v1/release /v1/envoy/reset ");
    EXPECT_EQ(find_endpoint("/v1/report")->door.who, Access::admin_to_give_back);
    EXPECT_EQ(find_endpoint("/v1/reset")->door.who, Access::admin);
    EXPECT_EQ(find_endpoint("/v1/check")->door.who, Access::anyone);
    EXPECT_EQ(grpc_door().door.can, can::spend);
}

// The five doors that spend or free units take the road (road::Road::decide), each its own
// way; every other row answers by itself. A new spending door without a way does not compile
// (endpoints.cpp).
TEST(DoorTable, TheDoorsThatSpendOrReleaseTakeTheOneRoad) {
    std::string roads;
    for (const Endpoint& e : endpoint_table()) {
        EXPECT_TRUE(road::chose_way(e.door.road)) << e.path;
        if (e.door.road != road::Way::own) {
            roads += std::string(e.path) + "=" + std::to_string(static_cast<int>(e.door.road)) + " ";
        }
    }
    const auto n = [](road::Way r) { return std::to_string(static_cast<int>(r)); };
    EXPECT_EQ(roads, "/v1/check=" + n(road::Way::check) + " /v1/report=" + n(road::Way::report) + " /v1/auth=" +
                         n(road::Way::auth) + " /v1/release=" + n(road::Way::release) + " /json=" +
                         n(road::Way::rls) + " ");
    EXPECT_EQ(grpc_door().door.road, road::Way::rls);
}

// The docs table is the code's: each path and its Redis bound appear in docs/security.md.
TEST(DoorTable, SecurityDocShowsEveryRowWithItsRedisBound) {
    const std::string doc = security_doc();
    ASSERT_FALSE(doc.empty()) << "docs/security.md not found";
    for (const Endpoint& e : endpoint_table()) {
        const std::string row_start = "| `" + std::string(e.path) + "` |";
        const auto at = doc.find(row_start);
        ASSERT_NE(at, std::string::npos) << e.path;
        const std::string row = doc.substr(at, doc.find('\n', at) - at);
        EXPECT_NE(row.find(std::string(e.door.redis_work)), std::string::npos) << row;
    }
    const auto grpc = doc.find("| `" + std::string(grpc_door().name) + "` |");
    ASSERT_NE(grpc, std::string::npos);
    EXPECT_NE(doc.substr(grpc, doc.find('\n', grpc) - grpc).find(std::string(grpc_door().door.redis_work)),
              std::string::npos);
}

// The RLS door's refusals are rows of the docs too, each with who can cause it: the proxy.
TEST(DoorTable, SecurityDocShowsEveryRefusalOfTheRlsDoorAndWhoCausesIt) {
    const std::string doc = security_doc();
    ASSERT_FALSE(grpc_door().refusals.empty());
    for (const auto& r : grpc_door().refusals) {
        const std::string row = "| " + std::string(r.input) + " | " + std::string(r.cause) + " |";
        EXPECT_NE(doc.find(row), std::string::npos) << row;
    }
}

TEST(BodyReader, AFieldGivenTwiceIsRefusedNamingItOnEveryJsonDoor) {
    const std::string lease = "0123456789abcdef0123456789abcdef";
    for (const BodyKind kind : {BodyKind::check, BodyKind::report, BodyKind::release}) {
        for (const std::string field : {"policy", "tenant", "scope", "cost", "method", "path", "plan"}) {
            const std::string value = field == "cost" ? "1" : "\"x\"";
            const std::string body = "{\"tenant\":\"t\",\"lease\":\"" + lease + "\",\"cost\":2,\"" + field + "\":" +
                                     value + ",\"" + field + "\":" + value + "}";
            SCOPED_TRACE(body);
            auto r = parse_body_json(body, kind);
            ASSERT_FALSE(r.has_value());
            EXPECT_EQ(r.error().code, errc::invalid_request);
            EXPECT_EQ(r.error().detail, field + ": given more than once");
        }
    }
    auto r = parse_body_json(R"({"tenant":"t","lease":"a","lease":"b"})", BodyKind::release);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().detail, "lease: given more than once");
}

TEST(BodyReader, EachDoorReadsItsOwnFields) {
    auto report = parse_body_json(R"({"tenant":"t","cost":-7})", BodyKind::report);
    ASSERT_TRUE(report.has_value()) << report.error().detail;
    EXPECT_EQ(report->cost, -7);
    EXPECT_FALSE(parse_body_json(R"({"tenant":"t","cost":-7})", BodyKind::check).has_value());
    EXPECT_FALSE(parse_body_json(R"({"tenant":"t"})", BodyKind::report).has_value()) << "a report's cost is required";
    auto release = parse_body_json(R"({"tenant":"t","lease":"abc"})", BodyKind::release);
    ASSERT_TRUE(release.has_value());
    EXPECT_EQ(release->lease, "abc");
    // "lease" is no check field: ignored there, as any unknown field.
    EXPECT_TRUE(parse_body_json(R"({"tenant":"t","lease":5,"lease":6})", BodyKind::check).has_value());
    EXPECT_FALSE(parse_body_json(R"({"tenant":"t"})", BodyKind::release).has_value()) << "a release needs its lease";
}

// The token is compared by digest: a presented token of any length, its prefix or the token
// with more after it, is simply wrong.
TEST(BearerToken, OnlyTheExactTokenMatchesWhateverTheLengthPresented) {
    const std::string token = "0123456789abcdef0123";
    EXPECT_TRUE(bearer_matches("Bearer " + token, token));
    EXPECT_FALSE(bearer_matches("Bearer " + token.substr(0, 19), token));
    EXPECT_FALSE(bearer_matches("Bearer " + token + "4", token));
    EXPECT_FALSE(bearer_matches("Bearer ", token));
    EXPECT_FALSE(bearer_matches("Bearer " + std::string(10000, 'a'), token));
}

}  // namespace
}  // namespace ratelimitd::http
