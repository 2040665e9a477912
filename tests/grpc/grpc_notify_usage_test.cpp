// Quota webhooks on the gRPC door: Envoy Gateway's two-phase cost (the request phase asks with
// hits_addend 0, the response phase sends the tokens at stream end) crosses the thresholds of a
// domain rule named in notify.policies by its label, once each, with both key layouts: ratelimitd's
// (a response phase past the limit charged as a report, envoy_denied_calls: charge) and
// envoyproxy/ratelimit's (its counter charged past the limit in one script). On a real
// redis-server, with a client from proto/ and the tests' own receiver.
#include "support/event_schema.hpp"
#include "support/held_window.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"
#include "support/webhook_receiver.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

namespace ratelimitd::test::grpc_notify_usage_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::string config(const WebhookReceiver& receiver) {
    return R"(envoy_denied_calls: charge
domains:
  - domain: llm
    descriptors:
      - key: tokens
        rate_limit: {unit: hour, requests_per_unit: 1000}
notify:
  targets:
    ops: {url: ")" +
           receiver.url() + R"(", secret: "tests-webhook-secret-0123456789", timeout: 2s}
  policies:
    llm.tokens: {at: [0.8, 1.0], target: ops}
)";
}

Descriptor tokens(const std::string& user, std::uint64_t hits) { return Descriptor{{{"tokens", user}}, hits}; }

// The counters are aligned to the hour: a phase straddling its end would count in two windows.
TEST(GrpcNotifyUsage, ResponsePhaseCostsCrossEachThresholdOnceWithEitherKeyLayout) {
    for (const std::string layout : {"ratelimitd", "envoyproxy-ratelimit"}) {
        SCOPED_TRACE(layout);
        in_one_window(1h, [&](int attempt) {
            RedisServer redis;
            WebhookReceiver receiver;
            Ratelimitd server(config(receiver), redis.url(),
                              {"--grpc-listen", "127.0.0.1:0", "--envoy-key-layout", layout});
            RlsClient client(grpc_port_from_log(server.process().wait_for_log("grpc listening on", process_start_bound)));
            const std::string user = "u" + std::to_string(attempt);
            const auto phase = [&](std::uint64_t hits) { return client.code(rls_request("llm", {tokens(user, hits)})); };
            EXPECT_EQ(phase(0), RlsResponse::OK);
            EXPECT_EQ(phase(700), RlsResponse::OK) << "700 of 1,000: below 80 %";
            EXPECT_EQ(phase(0), RlsResponse::OK);
            EXPECT_EQ(phase(200), RlsResponse::OK) << "900: past 80 %";
            EXPECT_EQ(phase(0), RlsResponse::OK);
            EXPECT_EQ(phase(300), RlsResponse::OVER_LIMIT) << "1,200: over, and metered all the same";
            EXPECT_EQ(phase(0), RlsResponse::OVER_LIMIT);
            EXPECT_EQ(phase(50), RlsResponse::OVER_LIMIT) << "past both already";
            ASSERT_TRUE(wait_until([&] { return receiver.count() >= 2; }, 20s));
            std::multiset<double> thresholds;
            for (const auto& r : receiver.requests()) {
                const json e = json::parse(r.body);
                EXPECT_EQ(e["type"], "threshold");
                EXPECT_EQ(e["policy"], "llm.tokens");
                EXPECT_EQ(e["limit"], 1000);
                thresholds.insert(e["threshold"].get<double>());
            }
            EXPECT_EQ(thresholds, (std::multiset<double>{0.8, 1.0}));
            EXPECT_EQ(schema_failures(receiver.requests()), "");
            // A third event would have been queued before the last phase answered; a fresh user's
            // crossing, queued after it, arrives with it or after it.
            EXPECT_EQ(client.code(rls_request("llm", {tokens(user + "-late", 900)})), RlsResponse::OK);
            ASSERT_TRUE(wait_until([&] { return receiver.count() >= 3; }, 20s));
            EXPECT_EQ(receiver.count(), 3u);
        });
    }
}

}  // namespace
}  // namespace ratelimitd::test::grpc_notify_usage_test
