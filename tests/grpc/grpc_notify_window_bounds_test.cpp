// The window a quota webhook event names for an Envoy domain rule is the window its counter
// counts in: the unit's aligned window, [floor(t / unit) * unit, that + unit), with either key
// layout. ratelimitd's own layout names that window in the counter's key but lets the counter
// expire a unit after its first charge; an event once took its bounds from that TTL, so an hour
// rule's event ended mid-hour. On a real redis-server, with a client from proto/ and the tests'
// own receiver.
#include "support/event_schema.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"
#include "support/webhook_event_check.hpp"
#include "support/webhook_receiver.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <map>

namespace ratelimitd::test::grpc_notify_window_bounds_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* secret = "tests-webhook-secret-0123456789";

// One rule per unit, each labelled "bounds.<unit>" and warned at half its limit.
const std::map<std::string, std::int64_t> unit_seconds{{"second", 1}, {"minute", 60}, {"hour", 3600}, {"day", 86400}};

std::string config(const WebhookReceiver& receiver) {
    std::string text = "envoy_denied_calls: charge\ndomains:\n  - domain: bounds\n    descriptors:\n";
    for (const auto& [unit, seconds] : unit_seconds) {
        text += "      - key: " + unit + "\n        rate_limit: {unit: " + unit + ", requests_per_unit: 10}\n";
    }
    text += "notify:\n  targets:\n    ops: {url: \"" + receiver.url() + "\", secret: \"" + secret +
            "\", timeout: 2s}\n  policies:\n";
    for (const auto& [unit, seconds] : unit_seconds) text += "    bounds." + unit + ": {at: [0.5], target: ops}\n";
    return text;
}

std::int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST(GrpcNotifyWindowBounds, EachUnitsEventNamesItsAlignedWindowWithEitherKeyLayout) {
    for (const std::string layout : {"ratelimitd", "envoyproxy-ratelimit"}) {
        SCOPED_TRACE(layout);
        RedisServer redis;
        WebhookReceiver receiver;
        Ratelimitd server(config(receiver), redis.url(), {"--grpc-listen", "127.0.0.1:0", "--envoy-key-layout", layout});
        RlsClient client(grpc_port_from_log(server.process().wait_for_log("grpc listening on", process_start_bound)));
        // One call charges 6 of each rule's 10: past half of each, one event per unit.
        std::vector<Descriptor> descriptors;
        for (const auto& [unit, seconds] : unit_seconds) descriptors.push_back(Descriptor{{{unit, "ann"}}, 6});
        const std::int64_t before = now_s();
        EXPECT_EQ(client.code(rls_request("bounds", descriptors)), RlsResponse::OK);
        const std::int64_t after = now_s();
        ASSERT_TRUE(wait_until([&] { return receiver.count() >= unit_seconds.size(); }, 20s)) << receiver.count();
        EXPECT_EQ(receiver.count(), unit_seconds.size());
        std::map<std::string, json> by_policy;
        for (const auto& r : receiver.requests()) {
            const json e = verified_event(r, secret, now_s());
            by_policy[e["policy"].get<std::string>()] = e;
        }
        for (const auto& [unit, seconds] : unit_seconds) {
            SCOPED_TRACE(unit);
            ASSERT_EQ(by_policy.count("bounds." + unit), 1u);
            const json& e = by_policy["bounds." + unit];
            const std::int64_t start = e["window_start"].get<std::int64_t>();
            EXPECT_EQ(e["window"]["seconds"], seconds);
            // The call's window: the one holding the instant the sidecar cut its key, which lies
            // between `before` and `after` (the same window unless a boundary fell between them).
            EXPECT_TRUE(start == before / seconds * seconds || start == after / seconds * seconds)
                << e.dump() << " called between " << before << " and " << after;
            EXPECT_EQ(start % seconds, 0) << e.dump();
            EXPECT_EQ(e["window_end"].get<std::int64_t>(), start + seconds) << e.dump();
            EXPECT_EQ(e["used"], 6);
        }
        EXPECT_EQ(schema_failures(receiver.requests()), "");
    }
}

}  // namespace
}  // namespace ratelimitd::test::grpc_notify_window_bounds_test
