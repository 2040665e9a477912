// A fleet: three ratelimitd instances sharing one Redis, requests spread over all three at
// once; each policy admits exactly its limit across the fleet, not per instance.
#include "support/http_client.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

namespace ratelimitd::test {
namespace {

using json = nlohmann::json;

// Windows long enough that nothing refills or expires during the test.
const char* const config = R"(
policies:
  fw:
    algorithm: fixed_window
    limit: 50
    window: 600s
  sl:
    algorithm: sliding_log
    limit: 50
    window: 600s
  tb:
    algorithm: token_bucket
    limit: 50
    window: 600s
)";

TEST(Fleet, ThreeSidecarsSharingOneRedisAdmitExactlyTheLimit) {
    RedisServer redis;
    std::vector<std::unique_ptr<Ratelimitd>> fleet;
    for (int i = 0; i < 3; ++i) fleet.push_back(std::make_unique<Ratelimitd>(config, redis.url()));

    const std::vector<std::string> policies{"fw", "sl", "tb"};
    constexpr int per_policy = 300;
    constexpr int clients = 12;  // four per sidecar, all at once
    std::atomic<int> next{0};
    std::mutex mu;
    std::map<std::string, std::map<int, int>> statuses;  // policy -> status -> count
    std::map<int, int> per_sidecar;                        // sidecar -> requests answered
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
        threads.emplace_back([&, c] {
            const int sidecar = c % 3;
            HttpClient client(fleet[sidecar]->port());
            for (int n; (n = next.fetch_add(1)) < per_policy * 3;) {
                const std::string& policy = policies[n % 3];
                auto r = client.post("/v1/check", json{{"policy", policy}, {"tenant", "shared"}}.dump());
                std::lock_guard lock(mu);
                ++statuses[policy][r.status];
                ++per_sidecar[sidecar];
            }
        });
    }
    for (auto& t : threads) t.join();

    for (const auto& p : policies) {
        EXPECT_EQ(statuses[p][200], 50) << p;
        EXPECT_EQ(statuses[p][429], per_policy - 50) << p;
        EXPECT_EQ(statuses[p].size(), 2u) << p << ": only 200 and 429";
    }
    for (int s = 0; s < 3; ++s) EXPECT_GE(per_sidecar[s], 100) << "sidecar " << s << " took its share";
    for (const auto& k : redis.keys()) EXPECT_GT(redis.integer({"PTTL", k}), 0) << k;
}

}  // namespace
}  // namespace ratelimitd::test
