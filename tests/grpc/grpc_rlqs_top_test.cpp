// GET /v1/top?rlqs= against the real binary: the quota service's buckets ranked per rule by
// demand (allowed + denied reported) and by denials, from concurrent streams, counted exactly;
// a stream naming thousands of distinct buckets (and hostile figures and ids) keeps the answer
// within top_k buckets of bounded renderings; the parameters refused with their names.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/quota_client.hpp"
#include "support/rls_client.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::test::grpc_rlqs_top_test {
namespace {

using json = nlohmann::json;

const std::string admin_token = "rlqs-top-admin-token-0123456789";
const std::map<std::string, std::string> as_admin = {{"Authorization", "Bearer " + admin_token}};

const std::string config = R"(rlqs:
  web:
    api:
      match: {kind: api}
      limit: 1000
      window: 60s
    blocked:
      match: {kind: blocked}
      blanket: deny_all
)";

class RlqsTop : public ::testing::Test {
protected:
    explicit RlqsTop(const std::string& top_k = "20")
        : server_(config, "", {"--grpc-listen", "127.0.0.1:0", "--top-k", top_k},
                  {"RATELIMITD_ADMIN_TOKEN=" + admin_token}) {
        port_ = grpc_port_from_log(server_.process().wait_for_log("grpc listening on", process_start_bound));
    }

    /// Sends each report on one stream, waiting for each answer: every bucket is recorded by then.
    void report_all(const std::vector<QuotaReports>& reports) {
        QuotaStreamClient stream(port_);
        for (const auto& report : reports) {
            ASSERT_TRUE(stream.send(report));
            ASSERT_TRUE(stream.read().has_value());
        }
        EXPECT_TRUE(stream.finish().ok());
    }

    HttpResponse top(const std::string& query) { return HttpClient(server_.port()).get("/v1/top" + query, as_admin); }

    /// {bucket rendering: count} of one rule's ranking.
    std::map<std::string, std::uint64_t> counts(const std::string& query) {
        const auto res = top(query);
        EXPECT_EQ(res.status, 200) << res.body;
        std::map<std::string, std::uint64_t> out;
        const auto body = json::parse(res.body);
        for (const auto& rule : body["rlqs"]) {
            for (const auto& b : rule["buckets"]) {
                EXPECT_EQ(b["error"], 0) << res.body;  // fewer buckets than top_k: exact
                out[rule["rule"].get<std::string>() + " " + b["bucket"].get<std::string>()] = b["count"];
            }
        }
        return out;
    }

    Ratelimitd server_;
    unsigned short port_ = 0;
};

TEST_F(RlqsTop, ConcurrentStreamsRankBucketsByDemandAndByDenials) {
    constexpr int streams = 4;
    constexpr int reports = 25;
    const auto report = quota_report("web", {{{{"kind", "api"}, {"tenant", "t-1"}}, 3, 1},
                                             {{{"kind", "api"}, {"tenant", "t-2"}}, 1, 4},
                                             {{{"kind", "api"}, {"tenant", "t-3"}}, 2, 0},
                                             {{{"kind", "blocked"}}, 0, 2},
                                             {{{"kind", "nobody"}}, 50, 50}});  // abandoned: not ranked
    std::vector<std::thread> threads;
    for (int s = 0; s < streams; ++s) {
        threads.emplace_back([&] { report_all(std::vector<QuotaReports>(reports, report)); });
    }
    for (auto& t : threads) t.join();
    constexpr std::uint64_t n = streams * reports;
    EXPECT_EQ(counts("?rlqs=web&by=demand"), (std::map<std::string, std::uint64_t>{{"api kind=api,tenant=t-1", 4 * n},
                                                                               {"api kind=api,tenant=t-2", 5 * n},
                                                                               {"api kind=api,tenant=t-3", 2 * n},
                                                                               {"blocked kind=blocked", 2 * n}}));
    EXPECT_EQ(counts("?rlqs=web&rule=api&by=denied&n=1"),
              (std::map<std::string, std::uint64_t>{{"api kind=api,tenant=t-2", 4 * n}}));
    const auto body = json::parse(top("?rlqs=web&rule=api").body);  // by=denied, the default
    EXPECT_EQ(body["by"], "denied");
    EXPECT_EQ(body["k"], 20);
    EXPECT_EQ(body["rlqs"][0]["buckets"].size(), 2u);  // t-3 denied nothing
    // Policies' tenants are another ranking: the buckets are not among them.
    EXPECT_EQ(json::parse(top("").body)["policies"].size(), 0u);
}

class RlqsTopFlood : public RlqsTop {
protected:
    RlqsTopFlood() : RlqsTop("4") {}
};

// 50 reports of 99 new buckets each and one heavy one, then a bucket of 16 pairs of the longest
// keys and values with figures of UINT64_MAX: the ranking holds top_k buckets, each rendering
// at most 128 bytes, the heavy bucket still found, the hostile figures capped.
TEST_F(RlqsTopFlood, ManyDistinctBucketsStayWithinTheBoardsBound) {
    std::vector<QuotaReports> reports;
    for (int r = 0; r < 50; ++r) {
        std::vector<QuotaUsage> usages{{{{"kind", "api"}, {"tenant", "heavy"}}, 50, 0}};
        for (int b = 0; b < 99; ++b) usages.push_back({{{"kind", "api"}, {"tenant", std::to_string(r * 99 + b)}}, 1, 0});
        reports.push_back(quota_report("web", usages));
    }
    QuotaBucket longest{{"kind", "api"}};
    for (char c = 'a'; c < 'a' + 15; ++c) longest[std::string(127, 'k') + c] = std::string(256, 'v');
    const auto huge = std::numeric_limits<std::uint64_t>::max();
    reports.push_back(quota_report("web", {{longest, huge, huge}}));
    report_all(reports);

    const auto res = top("?rlqs=web&rule=api&by=demand&n=4");
    ASSERT_EQ(res.status, 200) << res.body;
    const auto body = json::parse(res.body);
    const auto& buckets = body["rlqs"][0]["buckets"];
    ASSERT_EQ(buckets.size(), 4u);
    for (const auto& b : buckets) EXPECT_LE(b["bucket"].get<std::string>().size(), 128u);
    // Capped: each figure at most 4294967295, so the sum neither wraps nor passes 2^33.
    EXPECT_EQ(buckets[0]["bucket"].get<std::string>().substr(0, 9), "kind=api,");
    EXPECT_EQ(buckets[0]["bucket"].get<std::string>().substr(buckets[0]["bucket"].get<std::string>().size() - 3), "...");
    EXPECT_GE(buckets[0]["count"].get<std::uint64_t>(), 2 * 4'294'967'295ULL);
    EXPECT_LE(buckets[0]["count"].get<std::uint64_t>() - buckets[0]["error"].get<std::uint64_t>(), 2 * 4'294'967'295ULL);
    EXPECT_EQ(buckets[1]["bucket"], "kind=api,tenant=heavy");
    EXPECT_GE(buckets[1]["count"].get<std::uint64_t>(), 50u * 50u);
    EXPECT_LE(buckets[1]["count"].get<std::uint64_t>() - buckets[1]["error"].get<std::uint64_t>(), 50u * 50u);
    // The whole answer is bounded by top_k renderings, whatever was reported.
    EXPECT_LT(res.body.size(), 1'024u);
}

TEST_F(RlqsTop, BadParametersAreRefusedByName) {
    const std::map<std::string, std::string> refused = {
        {"?rlqs=web&policy=api", "rlqs:"},        {"?rule=api", "rule:"},
        {"?by=demand", "by:"},                     {"?rlqs=web&by=admitted", "by:"},
        {"?rlqs=", "rlqs:"},                       {"?rlqs=web&rule=api&rule=api", "rule:"}};
    for (const auto& [query, named] : refused) {
        const auto res = top(query);
        EXPECT_EQ(res.status, 400) << query;
        EXPECT_NE(res.body.find("\"invalid_request\""), std::string::npos) << query << " " << res.body;
        EXPECT_NE(res.body.find("\"" + named), std::string::npos) << query << " " << res.body;
    }
    for (const std::string query : {"?rlqs=elsewhere", "?rlqs=web&rule=nope"}) {
        const auto res = top(query);
        EXPECT_EQ(res.status, 400) << query;
        EXPECT_NE(res.body.find("unknown_policy"), std::string::npos) << res.body;
    }
    // A named rule is listed even when quiet.
    EXPECT_EQ(json::parse(top("?rlqs=web&rule=blocked").body)["rlqs"][0]["rule"], "blocked");
    EXPECT_EQ(HttpClient(server_.port()).get("/v1/top?rlqs=web").status, 401);  // admin: the token is required
}

}  // namespace
}  // namespace ratelimitd::test::grpc_rlqs_top_test
