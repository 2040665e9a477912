// Giving units back through POST /v1/report is an operator's act (docs/operations.md "Admin endpoints", as the admin
// endpoints): with an admin token set, a refund without it is refused and changes nothing, so
// a caller's "checks, then refund" loop admits exactly the limit; with it, the refund is
// logged and counted, forgets the key in every sidecar's denial cache, and the checks after
// it pass. Against the real binary and a real redis-server.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <future>
#include <regex>
#include <vector>

namespace ratelimitd::test::refund_access_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string admin_token = "refund-access-test-token-0123456789";
const std::string bearer = "Bearer " + admin_token;

// Every algorithm a refund can be given to, and a calendar month; 5 units each.
const std::string config = R"(
policies:
  fw: { algorithm: fixed_window, limit: 5, window: 10m }
  tb: { algorithm: token_bucket, limit: 5, window: 10m }
  gcra: { algorithm: gcra, limit: 5, window: 10m }
  sw: { algorithm: sliding_window, limit: 5, window: 10m }
  monthly: { algorithm: fixed_window, align: calendar, window: 1mo, limit: 5, long_ttl: true }
  two:
    algorithm: fixed_window
    windows:
      - { name: short, limit: 3, window: 1m }
      - { name: long, limit: 10, window: 1h }
)";

std::string body(const std::string& policy, const std::string& tenant, long cost) {
    return json{{"policy", policy}, {"tenant", tenant}, {"cost", cost}}.dump();
}

/// `n` checks at once, each on its own connection; how many were admitted (200).
int admitted_of_concurrent_checks(unsigned short port, const std::string& policy, const std::string& tenant,
                                  int n) {
    std::vector<std::future<int>> answers;
    for (int i = 0; i < n; ++i) {
        answers.push_back(std::async(std::launch::async, [&] {
            HttpClient c(port);
            return c.post("/v1/check", json{{"policy", policy}, {"tenant", tenant}}.dump()).status;
        }));
    }
    int admitted = 0;
    for (auto& a : answers) {
        const int status = a.get();
        EXPECT_TRUE(status == 200 || status == 429) << status;
        admitted += status == 200 ? 1 : 0;
    }
    return admitted;
}

/// The value of one sample of the /metrics text, -1 when absent.
double sample(unsigned short port, const std::string& series) {
    HttpClient c(port);
    const std::string text = c.get("/metrics").body;
    const auto at = text.find(series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 1));
}

class RefundAccess : public ::testing::Test {
protected:
    RedisServer redis;
    Ratelimitd sidecar{config, redis.url(), {"--store-timeout", "5s"}, {"RATELIMITD_ADMIN_TOKEN=" + admin_token}};
};

TEST_F(RefundAccess, ARefundWithoutTheTokenIsRefusedAndTheLimitHoldsExactly) {
    struct Case {
        std::string policy;
        int limit;
    };
    for (const Case& c : {Case{"fw", 5}, Case{"tb", 5}, Case{"gcra", 5}, Case{"sw", 5}, Case{"monthly", 5},
                          Case{"two", 3}}) {
        SCOPED_TRACE(c.policy);
        int admitted = 0;
        HttpClient client(sidecar.port());
        // The reviewer's loop: checks, then a refund of what they spent, twenty times over.
        for (int round = 0; round < 20; ++round) {
            admitted += admitted_of_concurrent_checks(sidecar.port(), c.policy, "loop", 5);
            const auto none = client.post("/v1/report", body(c.policy, "loop", -5));
            EXPECT_EQ(none.status, 401) << none.body;
            EXPECT_NE(none.body.find("negative cost"), std::string::npos) << none.body;
            EXPECT_EQ(none.header("www-authenticate"), R"(Bearer realm="ratelimitd-admin")");
            const auto wrong = client.post("/v1/report", body(c.policy, "loop", -5),
                                           {{"Authorization", "Bearer " + admin_token + "x"}});
            EXPECT_EQ(wrong.status, 401) << wrong.body;
        }
        EXPECT_EQ(admitted, c.limit);
        // A positive report stays open to the callers that may check.
        EXPECT_EQ(client.post("/v1/report", body(c.policy, "charged", 2)).status, 200);
        EXPECT_EQ(sample(sidecar.port(), "ratelimitd_refunds_total{policy=\"" + c.policy + "\"}"), 0)
            << "a refused refund is not counted";
    }
}

TEST_F(RefundAccess, WithTheTokenARefundGivesUnitsBackAndIsLoggedAndCounted) {
    HttpClient client(sidecar.port());
    EXPECT_EQ(admitted_of_concurrent_checks(sidecar.port(), "fw", "acme", 7), 5);
    const auto refund = client.post("/v1/report", body("fw", "acme", -3), {{"Authorization", bearer}});
    ASSERT_EQ(refund.status, 200) << refund.body;
    EXPECT_EQ(json::parse(refund.body)["remaining"], 3);
    EXPECT_EQ(admitted_of_concurrent_checks(sidecar.port(), "fw", "acme", 5), 3);

    EXPECT_EQ(sample(sidecar.port(), R"(ratelimitd_refunds_total{policy="fw"})"), 1);
    EXPECT_EQ(sample(sidecar.port(), R"(ratelimitd_refunded_units_total{policy="fw"})"), 3);
    // The log names the key by a hash, the units and the peer; never the tenant's key.
    const std::string line = sidecar.process().wait_for_log("refund policy=fw", process_start_bound);
    EXPECT_TRUE(std::regex_search(line, std::regex("key_hash=[0-9a-f]{16} units=3 peer=\"127\\.0\\.0\\.1\""))) << line;
    EXPECT_EQ(line.find("acme"), std::string::npos) << line;
}

TEST_F(RefundAccess, CostZeroAndARepeatedCostAreRefusedAndChangeNothing) {
    HttpClient client(sidecar.port());
    const auto zero = client.post("/v1/report", body("fw", "z", 0));
    EXPECT_EQ(zero.status, 400) << zero.body;
    EXPECT_NE(zero.body.find("invalid_cost"), std::string::npos) << zero.body;
    EXPECT_EQ(zero.body.find("remaining"), std::string::npos) << "a refused report answers no state";
    // A reader keeping the last value would refund 5 here.
    const auto twice = client.post("/v1/report", R"({"policy":"fw","tenant":"z","cost":1,"cost":-5})");
    EXPECT_EQ(twice.status, 400) << twice.body;
    EXPECT_NE(twice.body.find("cost: given more than once"), std::string::npos) << twice.body;
    const auto tenant_twice = client.post("/v1/report", R"({"policy":"fw","tenant":"a","tenant":"z","cost":1})");
    EXPECT_EQ(tenant_twice.status, 400) << tenant_twice.body;
    EXPECT_NE(tenant_twice.body.find("tenant: given more than once"), std::string::npos) << tenant_twice.body;
    EXPECT_EQ(redis.command({"DBSIZE"}), "0");
}

// The issue's figures: after 7 checks (the 7th denied, so cached) and a refund of 5, the next
// checks pass, on this sidecar and, through the reset channel, on the others.
TEST(RefundDenialCache, ARefundIsForgottenByEverySidecarsDenialCache) {
    RedisServer redis;
    const std::vector<std::string> env{"RATELIMITD_ADMIN_TOKEN=" + admin_token};
    Ratelimitd a(config, redis.url(), {"--store-timeout", "5s"}, env);
    Ratelimitd b(config, redis.url(), {"--store-timeout", "5s"}, env);
    ASSERT_TRUE(wait_until([&] { return redis.command({"PUBSUB", "NUMSUB", "rl:resets"}) == "rl:resets 2"; },
        process_start_bound))
        << redis.command({"PUBSUB", "NUMSUB", "rl:resets"});
    HttpClient ca(a.port());
    HttpClient cb(b.port());
    const std::string check = json{{"policy", "fw"}, {"tenant", "cached"}}.dump();
    for (int i = 0; i < 5; ++i) ASSERT_EQ(ca.post("/v1/check", check).status, 200);
    for (int i = 0; i < 2; ++i) ASSERT_EQ(ca.post("/v1/check", check).status, 429);
    for (int i = 0; i < 2; ++i) ASSERT_EQ(cb.post("/v1/check", check).status, 429);
    ASSERT_GT(sample(a.port(), R"(ratelimitd_denial_cache_hits_total{policy="fw"})"), 0) << "the denial is cached";
    ASSERT_GT(sample(b.port(), R"(ratelimitd_denial_cache_hits_total{policy="fw"})"), 0) << "the denial is cached";

    ASSERT_EQ(ca.post("/v1/report", body("fw", "cached", -5), {{"Authorization", bearer}}).status, 200);
    // Here at once: the refund forgot the key before answering.
    EXPECT_EQ(ca.post("/v1/check", check).status, 200);
    EXPECT_EQ(ca.post("/v1/check", check).status, 200);
    // There once the reset channel has carried it (a 429 from the cache charges nothing).
    EXPECT_TRUE(wait_until([&] { return cb.post("/v1/check", check).status == 200; }, process_start_bound));
    EXPECT_EQ(cb.post("/v1/check", check).status, 200);
    EXPECT_EQ(cb.post("/v1/check", check).status, 200);
    EXPECT_EQ(cb.post("/v1/check", check).status, 429) << "5 refunded, 5 spent again";
}

}  // namespace
}  // namespace ratelimitd::test::refund_access_test
