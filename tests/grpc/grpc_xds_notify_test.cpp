// Quota webhooks on rules an xDS control plane sends (issue 51, step 3): the file names the
// label in notify.policies before any rule exists; each version the control plane sends gets
// the thresholds hung on its rules as it is applied. The test control plane
// (xds_control_plane.hpp), the real binary, a real redis-server, a gRPC client from proto/ and
// the tests' own receiver: a response-phase cost crosses 80 % of version 1's 1,000 per hour,
// then of version 2's 2,000, one event each naming the limit in force.
#include "grpc/xds_control_plane.hpp"
#include "support/event_schema.hpp"
#include "support/held_window.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"
#include "support/webhook_receiver.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ratelimitd::test::grpc_xds_notify_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::string config(const WebhookReceiver& receiver) {
    return "envoy_denied_calls: charge\nnotify:\n  targets:\n    ops: {url: \"" + receiver.url() +
           "\", secret: \"tests-webhook-secret-0123456789\", timeout: 2s}\n"
           "  policies:\n    llm.tokens: {at: [0.8], target: ops}\n";
}

TEST(GrpcXdsNotify, ThresholdsOnALabelHangOnTheRulesOfEachXdsVersion) {
    in_one_window(1h, [&](int attempt) {
        RedisServer redis;
        WebhookReceiver receiver;
        XdsControlPlane cp;
        cp.set("v1", {rls_config("llm", {{"tokens", "", 1000}})});
        Ratelimitd server(config(receiver), redis.url(),
                          {"--grpc-listen", "127.0.0.1:0", "--xds-server", cp.address(), "--xds-backoff-initial",
                           "100ms", "--xds-backoff-max", "400ms"});
        const RlsClient client(grpc_port_from_log(server.process().wait_for_log("grpc listening on", process_start_bound)));
        ASSERT_TRUE(cp.await_reply(cp.current_nonce(), 10s)) << server.process().log();
        const auto phase = [&](const std::string& user, std::uint64_t hits) {
            return client.code(rls_request("llm", {Descriptor{{{"tokens", user}}, hits}}));
        };
        const std::string first = "u" + std::to_string(attempt);
        EXPECT_EQ(phase(first, 0), RlsResponse::OK);
        EXPECT_EQ(phase(first, 850), RlsResponse::OK) << "850 of 1,000: past 80 %";
        ASSERT_TRUE(wait_until([&] { return receiver.count() >= 1; }, 20s)) << server.process().log();

        cp.set("v2", {rls_config("llm", {{"tokens", "", 2000}})});
        ASSERT_TRUE(cp.await_reply(cp.current_nonce(), 10s)) << server.process().log();
        const std::string second = "w" + std::to_string(attempt);
        EXPECT_EQ(phase(second, 1500), RlsResponse::OK) << "1,500 of 2,000: below 80 %";
        EXPECT_EQ(phase(second, 200), RlsResponse::OK) << "1,700: past it";
        ASSERT_TRUE(wait_until([&] { return receiver.count() >= 2; }, 20s));
        EXPECT_EQ(receiver.count(), 2u);
        const auto requests = receiver.requests();
        const json e1 = json::parse(requests[0].body);
        const json e2 = json::parse(requests[1].body);
        EXPECT_EQ(e1["policy"], "llm.tokens");
        EXPECT_EQ(e1["tenant"], first);
        EXPECT_EQ(e1["limit"], 1000);
        EXPECT_EQ(e1["used"], 850);
        EXPECT_EQ(e2["policy"], "llm.tokens");
        EXPECT_EQ(e2["tenant"], second);
        EXPECT_EQ(e2["limit"], 2000) << "version 2's rule carries the thresholds too";
        EXPECT_EQ(e2["used"], 1700);
        EXPECT_EQ(schema_failures(requests), "");
    });
}

}  // namespace
}  // namespace ratelimitd::test::grpc_xds_notify_test
