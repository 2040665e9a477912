// A demoted primary (a replica) met by a coalesced batch: READONLY is a store failure, as
// for a single check (never a bad script reply), so the breaker counts it and a Sentinel
// monitor would be told.
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace ratelimitd::test::readonly_batch_test {
namespace {

using namespace std::chrono_literals;

TEST(ReadOnlyBatch, AReplicaAnsweringABatchIsAnUnavailableStoreNotABadReply) {
    RedisServer primary;
    RedisServer replica("", {"--replicaof", "127.0.0.1", std::to_string(primary.port())});
    ASSERT_TRUE(wait_until([&] {
        return replica.command({"INFO", "replication"}).find("master_link_status:up") != std::string::npos;
    }, 10s));
    Ratelimitd server("policies:\n  open:\n    algorithm: sliding_log\n    limit: 1000\n    window: 600s\n",
                      replica.url(), {"--store-timeout", "2s", "--threads", "1"});
    // Many checks at once from many clients, so that they leave in batches. The replica holds
    // every command for a while first: the first calls wait in flight and the checks behind
    // them queue into batches, whatever the machine's load. Without the pause a fast READONLY
    // could answer each check before the next arrived, and the breaker opens after 5 failed
    // calls, so no batch might ever form.
    ASSERT_EQ(replica.command({"CLIENT", "PAUSE", "500", "ALL"}), "OK");
    std::atomic<int> next{0}, not_degraded{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < 16; ++c) {
        clients.emplace_back([&] {
            HttpClient client(server.port());
            while (next.fetch_add(1) < 400) {
                auto r = client.post("/v1/check", R"({"policy":"open","tenant":"t"})");
                if (r.status != 200 || r.header("x-ratelimit-degraded").empty()) ++not_degraded;
            }
        });
    }
    for (auto& t : clients) t.join();
    HttpClient c(server.port());
    const std::string metrics = c.get("/metrics").body;
    ASSERT_GT(sample(metrics, "ratelimitd_redis_coalesced_checks_total"),
              sample(metrics, "ratelimitd_redis_check_calls_total"))
        << "some checks left in batches";
    EXPECT_EQ(not_degraded.load(), 0) << "every check failed open";
    EXPECT_EQ(sample(metrics, "ratelimitd_store_errors_total{kind=\"bad_reply\"}"), 0) << metrics;
    EXPECT_GT(sample(metrics, "ratelimitd_store_errors_total{kind=\"unavailable\"}"), 0);
}

}  // namespace
}  // namespace ratelimitd::test::readonly_batch_test
