// envoy_denied_calls: charge | refuse, with Envoy Gateway's two-phase cost pattern (a usage-
// based limit: the request phase asks with hits_addend 0, the response phase sends the cost,
// e.g. an LLM's tokens, at stream end, when the answer no longer stops anything). Under
// `refuse` (the default) a response-phase call past the limit is denied and charges nothing;
// under `charge` it is charged anyway, so the next request phase is denied. Counted exactly on
// a real redis-server, with a client from proto/.
#include "support/concurrent_calls.hpp"
#include "support/held_window.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace ratelimitd::test::grpc_denied_calls_test {
namespace {

using namespace std::chrono_literals;

// Hours where counts are asserted: the windows are aligned to the unit.
std::string config(const std::string& denied_calls) {
    return "envoy_denied_calls: " + denied_calls + R"(
domains:
  - domain: llm
    descriptors:
      - key: tokens
        rate_limit: {unit: hour, requests_per_unit: 10}
)";
}

Descriptor tokens(const std::string& user, std::uint64_t hits) { return Descriptor{{{"tokens", user}}, hits}; }

struct Sidecar {
    Sidecar(const std::string& redis_url, const std::string& denied_calls)
        : server(config(denied_calls), redis_url, {"--grpc-listen", "127.0.0.1:0", "--store-timeout", "2s"}),
          client(grpc_port_from_log(server.process().wait_for_log("grpc listening on", process_start_bound))) {}
    RlsResponse call(const RlsRequest& req) {
        RlsResponse res;
        const auto status = client.call(req, res);
        EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
        return res;
    }
    RlsResponse::Code ask(const std::string& user) { return call(rls_request("llm", {tokens(user, 0)})).overall_code(); }
    RlsResponse::Code spend(const std::string& user, std::uint64_t n) {
        return call(rls_request("llm", {tokens(user, n)})).overall_code();
    }
    Ratelimitd server;
    RlsClient client;
};

/// The counter of `user`'s tokens in this hour's window, as Redis holds it.
long long counted(const RedisServer& redis, const std::string& user) {
    for (const auto& key : redis.keys()) {
        if (key.find("envoy/llm.tokens:" + user + ":") != std::string::npos) return std::stoll(redis.command({"GET", key}));
    }
    return 0;
}

TEST(GrpcDeniedCalls, RefuseTheDefaultChargesADeniedResponsePhaseNothing) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar s(redis.url(), "refuse");
        EXPECT_EQ(s.ask("u"), RlsResponse::OK);
        EXPECT_EQ(s.spend("u", 7), RlsResponse::OK);
        EXPECT_EQ(s.ask("u"), RlsResponse::OK);
        EXPECT_EQ(s.spend("u", 8), RlsResponse::OVER_LIMIT);
        EXPECT_EQ(counted(redis, "u"), 7) << "the 8 tokens spent were not metered";
        EXPECT_EQ(s.ask("u"), RlsResponse::OK) << "3 left as far as the counter knows";
    });
}

TEST(GrpcDeniedCalls, ChargeMetersResponsePhaseCostsPastTheLimit) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar s(redis.url(), "charge");
        EXPECT_EQ(s.ask("u"), RlsResponse::OK);
        EXPECT_EQ(s.spend("u", 7), RlsResponse::OK);
        EXPECT_EQ(s.ask("u"), RlsResponse::OK);
        EXPECT_EQ(s.spend("u", 8), RlsResponse::OVER_LIMIT) << "over its limit, as it is";
        EXPECT_EQ(counted(redis, "u"), 15) << "metered past the limit";
        EXPECT_EQ(s.ask("u"), RlsResponse::OVER_LIMIT) << "the next request phase is denied";
        // A cost no window can ever admit (more than the limit) is still metered, up to the debt
        // bound (the limit again: 2 x 10 in all).
        EXPECT_EQ(s.spend("v", 12), RlsResponse::OVER_LIMIT);
        EXPECT_EQ(counted(redis, "v"), 12);
        EXPECT_EQ(s.spend("v", 50), RlsResponse::OVER_LIMIT);
        EXPECT_EQ(counted(redis, "v"), 20);
        // A request phase (hits_addend 0) is never charged, denied or not.
        EXPECT_EQ(s.ask("v"), RlsResponse::OVER_LIMIT);
        EXPECT_EQ(counted(redis, "v"), 20);
    });
}

// Exact under concurrency: every response-phase unit is metered once, admitted or not (20 of
// cost 1 on a limit of 10 stay within the debt bound), and exactly 10 were admitted.
TEST(GrpcDeniedCalls, ChargeMetersEveryConcurrentCallExactlyOnce) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        std::vector<std::unique_ptr<Sidecar>> fleet;
        for (int i = 0; i < 3; ++i) fleet.push_back(std::make_unique<Sidecar>(redis.url(), "charge"));
        const CodeCounts counts = count_codes(20, [&](int i) {
            return fleet[static_cast<std::size_t>(i % 3)]->client.code(rls_request("llm", {tokens("w", 1)}));
        });
        EXPECT_EQ(counts.ok, 10);
        EXPECT_EQ(counts.over, 10);
        EXPECT_EQ(counts.failed, 0);
        EXPECT_EQ(counted(redis, "w"), 20);
    });
}

}  // namespace
}  // namespace ratelimitd::test::grpc_denied_calls_test
