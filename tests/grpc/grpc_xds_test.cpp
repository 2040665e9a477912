// Issue 35 item 3: the Envoy domains from an xDS control plane. A control plane written for the
// test from the published ADS protocol (xds_control_plane.hpp), the real binary, a real
// redis-server and a real gRPC client of the rate limit service: the first config served and
// enforced exactly under concurrent calls, an update, an invalid config (NACK with its reason,
// the old config still enforced), the control plane going away and coming back (old config
// enforced meanwhile, the stream re-established with the version in force, the new version
// accepted), TLS with a client certificate, and what is answered before the first config.
#include "grpc/grpc_tls_certs.hpp"
#include "grpc/xds_control_plane.hpp"
#include "support/concurrent_calls.hpp"
#include "support/held_window.hpp"
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

namespace ratelimitd::test::grpc_xds_test {
namespace {

using namespace std::chrono_literals;

// No policies and no domains: with xds_server the file needs neither.
const char* const no_rules = "prefix: rl\n";

std::vector<std::string> xds_args(const XdsControlPlane& cp, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--grpc-listen", "127.0.0.1:0", "--xds-server", cp.address(), "--xds-node-id",
                                  "test-node", "--xds-node-metadata", "zone=a,team=edge", "--xds-headers",
                                  "X-Token:abc", "--xds-backoff-initial", "100ms", "--xds-backoff-max", "400ms",
                                  "--xds-retry-interval", "1s"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

struct XdsSidecar {
    XdsSidecar(const XdsControlPlane& cp, const std::string& redis_url, std::vector<std::string> extra = {})
        : server(no_rules, redis_url, xds_args(cp, std::move(extra))),
          client(grpc_port_from_log(server.process().wait_for_log("grpc listening on", process_start_bound))),
          http(server.port()) {}

    // `calls` concurrent calls on one descriptor: how many were admitted, denied, failed.
    CodeCounts fire(const std::string& key, const std::string& value, int calls = 20) {
        return count_codes(calls, [&](int) { return client.code(rls_request("edge", {Descriptor{{{key, value}}, {}}})); });
    }
    // The limit a rule of `key`/`value` has in the config in force (0: no rule matches).
    std::uint32_t limit_of(const std::string& key, const std::string& value) {
        RlsResponse res;
        if (!client.call(rls_request("edge", {Descriptor{{{key, value}}, {}}}), res).ok()) return 0;
        return res.statuses_size() == 1 && res.statuses(0).has_current_limit()
                   ? res.statuses(0).current_limit().requests_per_unit()
                   : 0;
    }
    bool ready() { return http.get("/readyz").status == 200; }

    Ratelimitd server;
    RlsClient client;
    HttpClient http;
};

// The config of version `version`: `user` (each value on its own) at `per_hour`, and a probe rule
// whose value names the version, so a test awaits the version being in force without a sleep.
RateLimitConfig edge_at(const std::string& version, std::uint32_t per_hour) {
    return rls_config("edge", {{"user", "", per_hour}, {"probe", version, 1000}});
}

void expect_exact(const CodeCounts& c, int limit, int calls = 20) {
    EXPECT_EQ(c.ok, limit);
    EXPECT_EQ(c.over, calls - limit);
    EXPECT_EQ(c.failed, 0);
}

/// expect_exact of 20 concurrent calls of user `value` from an empty Redis, in one window of the
/// rule's unit (an hour, aligned to the clock): again should an hour begin meanwhile, its count
/// starting over (in_one_window).
void expect_exact_in_one_hour(const RedisServer& redis, XdsSidecar& s, const std::string& value, int limit) {
    in_one_window(1h, [&](int) {
        redis.command({"FLUSHALL"});
        expect_exact(s.fire("user", value), limit);
    });
}

TEST(GrpcXds, TheFirstConfigIsAwaitedThenServedAndEnforcedExactly) {
    RedisServer redis;
    XdsControlPlane cp;
    XdsSidecar s(cp, redis.url());
    // The stream opens with the node, its metadata and the extra headers, asking for every
    // RateLimitConfig, holding no version yet.
    const auto streams = cp.await_streams(1, 10s);
    ASSERT_EQ(streams.size(), 1u) << s.server.process().log();
    const auto& first = streams[0];
    EXPECT_EQ(first.node().id(), "test-node");
    EXPECT_EQ(first.node().user_agent_name(), "ratelimitd");
    EXPECT_EQ(first.node().metadata().fields().at("zone").string_value(), "a");
    EXPECT_EQ(first.node().metadata().fields().at("team").string_value(), "edge");
    EXPECT_EQ(first.type_url(), rls_config_type);
    EXPECT_EQ(first.version_info(), "");
    EXPECT_EQ(first.response_nonce(), "");
    const auto headers = cp.metadata();
    ASSERT_EQ(headers.count("x-token"), 1u);
    EXPECT_EQ(headers.find("x-token")->second, "abc");

    // Before the first config: not ready, and Envoy's calls get envoyproxy/ratelimit's error.
    const auto early = s.http.get("/readyz");
    EXPECT_EQ(early.status, 503);
    EXPECT_NE(early.body.find("awaiting_xds"), std::string::npos) << early.body;
    RlsResponse res;
    const auto status = s.client.call(rls_request("edge", {Descriptor{{{"user", "u0"}}, {}}}), res);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNKNOWN);
    EXPECT_EQ(status.error_message(), "no rate limit configuration loaded");

    cp.set("v1", {edge_at("v1", 5)});
    const auto ack = cp.await_reply(cp.current_nonce(), 10s);
    ASSERT_TRUE(ack) << s.server.process().log();
    EXPECT_FALSE(ack->nack) << ack->error_message;
    EXPECT_EQ(ack->version_info, "v1");
    ASSERT_TRUE(wait_until([&] { return s.ready(); }, 10s)) << s.server.process().log();
    // The version applied is said at info, naming each of its domains.
    EXPECT_FALSE(s.server.process().wait_for_log("xds: domain loaded domain=\"edge\" version=\"v1\"",
        process_start_bound).empty())
        << s.server.process().log();
    expect_exact_in_one_hour(redis, s, "u1", 5);
    EXPECT_EQ(redis.integer({"DBSIZE"}), 1) << "one counter: one user";

    // A reload of the file (SIGHUP) keeps the control plane's domains in force.
    s.server.write_config("prefix: rl\npolicies:\n  p: {algorithm: fixed_window, limit: 1, window: 1s}\n");
    s.server.process().signal(SIGHUP);
    ASSERT_FALSE(s.server.process().wait_for_log("reloaded path=", 10s).empty()) << s.server.process().log();
    EXPECT_EQ(s.limit_of("probe", "v1"), 1000u);
    expect_exact_in_one_hour(redis, s, "u2", 5);
    EXPECT_TRUE(s.ready());
}

TEST(GrpcXds, UpdatesInvalidConfigsAndAControlPlaneThatGoesAwayAndComesBack) {
    RedisServer redis;
    XdsControlPlane cp;
    cp.set("v1", {edge_at("v1", 5)});
    XdsSidecar s(cp, redis.url());
    ASSERT_TRUE(cp.await_reply(cp.current_nonce(), 10s)) << s.server.process().log();
    ASSERT_TRUE(wait_until([&] { return s.limit_of("probe", "v1") == 1000; }, 10s));
    expect_exact_in_one_hour(redis, s, "u1", 5);

    // An update: the new limit is served.
    cp.set("v2", {edge_at("v2", 3)});
    const auto ack = cp.await_reply(cp.current_nonce(), 10s);
    ASSERT_TRUE(ack && !ack->nack) << s.server.process().log();
    EXPECT_EQ(ack->version_info, "v2");
    ASSERT_TRUE(wait_until([&] { return s.limit_of("probe", "v2") == 1000; }, 10s));
    expect_exact_in_one_hour(redis, s, "u2", 3);

    // An invalid config: NACKed with the reason, the version in force named, nothing changed.
    auto bad = edge_at("v3", 1);
    bad.mutable_descriptors(0)->mutable_rate_limit()->set_unit(ratelimit::config::ratelimit::v3::UNKNOWN);
    cp.set("v3", {bad});
    const auto nack = cp.await_reply(cp.current_nonce(), 10s);
    ASSERT_TRUE(nack) << s.server.process().log();
    EXPECT_TRUE(nack->nack);
    EXPECT_EQ(nack->version_info, "v2");
    EXPECT_NE(nack->error_message.find("descriptors[0].rate_limit.unit: missing"), std::string::npos)
        << nack->error_message;
    EXPECT_EQ(s.limit_of("probe", "v3"), 0u);
    expect_exact_in_one_hour(redis, s, "u3", 3);
    EXPECT_NE(s.http.get("/metrics").body.find("ratelimitd_xds_updates_total{outcome=\"rejected\"} 1"),
              std::string::npos);

    // The control plane goes away: the config in force keeps serving, exactly.
    cp.stop();
    ASSERT_TRUE(wait_until([&] {
        return s.http.get("/metrics").body.find("ratelimitd_xds_connected 0") != std::string::npos;
    }, 10s));
    expect_exact_in_one_hour(redis, s, "u4", 3);
    EXPECT_TRUE(s.ready()) << "the config in force is still served";

    // It comes back with a new version: the stream is opened again, naming the version in force,
    // and the new one is accepted and served.
    cp.set("v4", {edge_at("v4", 2)});
    cp.restart();
    const auto streams = cp.await_streams(2, 15s);
    ASSERT_EQ(streams.size(), 2u) << s.server.process().log();
    EXPECT_EQ(streams[1].version_info(), "v2");
    const auto back = cp.await_reply(cp.current_nonce(), 10s);
    ASSERT_TRUE(back && !back->nack) << s.server.process().log();
    ASSERT_TRUE(wait_until([&] { return s.limit_of("probe", "v4") == 1000; }, 10s));
    expect_exact_in_one_hour(redis, s, "u5", 2);
}

// A control plane sending more than xds_max_message_bytes: the stream ends before the message is
// parsed, the config in force keeps serving, and the reconnections are paced by the backoff.
TEST(GrpcXds, AnOversizedMessageEndsTheStreamAndTheConfigInForceStays) {
    RedisServer redis;
    XdsControlPlane cp;
    cp.set("v1", {edge_at("v1", 3)});
    XdsSidecar s(cp, redis.url(), {"--xds-max-message-bytes", "1024"});
    ASSERT_TRUE(cp.await_reply(cp.current_nonce(), 10s)) << s.server.process().log();
    ASSERT_TRUE(wait_until([&] { return s.limit_of("probe", "v1") == 1000; }, 10s));
    std::vector<std::tuple<std::string, std::string, std::uint32_t>> many;
    for (int i = 0; i < 200; ++i) many.emplace_back("k", "value-" + std::to_string(i), 1);
    const auto sent = std::chrono::steady_clock::now();
    cp.set("v2", {rls_config("edge", many)});
    EXPECT_FALSE(s.server.process().wait_for_log("larger than max", 10s).empty()) << s.server.process().log();
    // The streams opened again are answered the same message: none is ever taken, and they are
    // paced: at least xds_backoff_initial (100ms) before each of the three after the first.
    EXPECT_GE(cp.await_streams(4, 10s).size(), 4u);
    EXPECT_GE(std::chrono::steady_clock::now() - sent, 300ms);
    EXPECT_FALSE(cp.await_reply(cp.current_nonce(), 10ms));
    expect_exact_in_one_hour(redis, s, "u1", 3);
    EXPECT_EQ(s.limit_of("probe", "v1"), 1000u);
}

TEST(GrpcXds, TheControlPlaneIsReachedOverTlsWithAClientCertificate) {
    GrpcTlsCerts certs;
    RedisServer redis;
    XdsControlPlane cp(0, XdsServerTls{certs.server().cert, certs.server().key, certs.ca().cert});
    cp.set("v1", {edge_at("v1", 4)});
    XdsSidecar s(cp, redis.url(),
                 {"--xds-tls", "on", "--xds-tls-ca", certs.ca().cert, "--xds-tls-cert", certs.client().cert,
                  "--xds-tls-key", certs.client().key, "--xds-tls-server-san", "localhost"});
    const auto ack = cp.await_reply(cp.current_nonce(), 10s);
    ASSERT_TRUE(ack && !ack->nack) << s.server.process().log();
    ASSERT_TRUE(wait_until([&] { return s.limit_of("probe", "v1") == 1000; }, 10s));
    expect_exact_in_one_hour(redis, s, "u1", 4);

    // Without a client certificate the handshake fails: no stream, the sidecar keeps trying.
    XdsSidecar anonymous(cp, redis.url(), {"--xds-tls", "on", "--xds-tls-ca", certs.ca().cert,
                                           "--xds-tls-server-san", "localhost"});
    EXPECT_FALSE(anonymous.server.process().wait_for_log("cannot reach the control plane", 10s).empty())
        << anonymous.server.process().log();
    EXPECT_EQ(cp.await_streams(2, 100ms).size(), 1u);
    EXPECT_FALSE(anonymous.ready());
}

// Issue 45 item 3: the client key emptied on disk (a Secret truncated, not yet written again)
// and then the control plane restarts. The reconnect reads the files again: the empty key is
// refused and counted, and the last good pair opens the new stream. Before, the empty key was
// handed to gRPC as "no client certificate" and every reconnect was refused by the control plane.
TEST(GrpcXds, AClientKeyEmptiedOnDiskKeepsTheLastGoodOneAcrossReconnects) {
    GrpcTlsCerts certs;
    RedisServer redis;
    const auto key = certs.dir() + "/xds-client.key";
    std::filesystem::copy_file(certs.client().key, key);
    XdsControlPlane cp(0, XdsServerTls{certs.server().cert, certs.server().key, certs.ca().cert});
    cp.set("v1", {edge_at("v1", 4)});
    XdsSidecar s(cp, redis.url(),
                 {"--xds-tls", "on", "--xds-tls-ca", certs.ca().cert, "--xds-tls-cert", certs.client().cert,
                  "--xds-tls-key", key, "--xds-tls-server-san", "localhost"});
    ASSERT_EQ(cp.await_streams(1, 10s).size(), 1u) << s.server.process().log();
    std::ofstream(key, std::ios::trunc).flush();  // `: > tls.key`
    cp.restart();
    EXPECT_EQ(cp.await_streams(2, 20s).size(), 2u) << "reconnected with the last good key\n" << s.server.process().log();
    const auto log = s.server.process().log();
    EXPECT_NE(log.find("xds: TLS reload refused: xds_tls_key: " + key + " is empty"), std::string::npos) << log;
    EXPECT_GE(sample(s.http.get("/metrics").body, "ratelimitd_tls_reload_total{outcome=\"refused\"}"), 1);
}

// A control plane file that cannot serve stops the start, naming it (it was only checked for
// being readable, and failed at every connection instead).
std::string xds_data(const std::string& file) {
    return std::string(RATELIMITD_TEST_DATA_DIR) + "/xds/" + file;
}

TEST(GrpcXds, ATlsFileThatCannotServeStopsTheStart) {
    GrpcTlsCerts certs;
    XdsControlPlane cp;
    Child mismatch({RATELIMITD_BINARY, "--config", xds_data("no_rules.yaml"), "--listen",
                    "127.0.0.1:0", "--xds-server", cp.address(), "--xds-tls", "on", "--xds-tls-cert",
                    certs.client().cert, "--xds-tls-key", certs.server().key},
                   scratch_dir() + "/xds-mismatch.log");
    EXPECT_EQ(mismatch.wait(process_start_bound), 1);
    EXPECT_NE(mismatch.log().find("xds_tls_key: " + certs.server().key + " does not match the certificate in "
                                  "xds_tls_cert " + certs.client().cert),
              std::string::npos)
        << mismatch.log();
    const auto empty_ca = certs.dir() + "/empty-ca.crt";
    std::ofstream(empty_ca).flush();
    Child empty({RATELIMITD_BINARY, "--config", xds_data("no_rules.yaml"), "--listen",
                 "127.0.0.1:0", "--xds-server", cp.address(), "--xds-tls", "on", "--xds-tls-ca", empty_ca},
                scratch_dir() + "/xds-empty-ca.log");
    EXPECT_EQ(empty.wait(process_start_bound), 1);
    EXPECT_NE(empty.log().find("xds_tls_ca: " + empty_ca + " is empty"), std::string::npos) << empty.log();
}

TEST(GrpcXds, ForceStartIsReadyBeforeTheFirstConfig) {
    XdsControlPlane cp;
    XdsSidecar s(cp, "", {"--xds-force-start", "on"});
    ASSERT_EQ(cp.await_streams(1, 10s).size(), 1u);
    EXPECT_TRUE(s.ready());
    RlsResponse res;
    EXPECT_EQ(s.client.call(rls_request("edge", {Descriptor{{{"user", "u0"}}, {}}}), res).error_code(),
              grpc::StatusCode::UNKNOWN);
}

TEST(GrpcXds, SettingsThatCannotWorkStopTheStart) {
    XdsControlPlane cp;
    // A file with Envoy domains of its own beside xds_server: two sources, refused.
    Child both({RATELIMITD_BINARY, "--config", xds_data("with_domains.yaml"), "--listen",
                "127.0.0.1:0", "--xds-server", cp.address()},
               scratch_dir() + "/xds-both.log");
    EXPECT_EQ(both.wait(process_start_bound), 1);
    EXPECT_NE(both.log().find("domains: not allowed with xds_server"), std::string::npos) << both.log();
    // A client certificate without its key.
    Child half({RATELIMITD_BINARY, "--config", xds_data("no_rules.yaml"), "--listen",
                "127.0.0.1:0", "--xds-server", cp.address(), "--xds-tls", "on", "--xds-tls-cert", "/etc/hostname"},
               scratch_dir() + "/xds-half.log");
    EXPECT_EQ(half.wait(process_start_bound), 1);
    EXPECT_NE(half.log().find("xds_tls_cert and xds_tls_key"), std::string::npos) << half.log();
    // Without xds_server the file still needs rules.
    Child none({RATELIMITD_BINARY, "--config", xds_data("no_rules.yaml"), "--listen", "127.0.0.1:0"},
               scratch_dir() + "/xds-none.log");
    EXPECT_EQ(none.wait(process_start_bound), 1);
    EXPECT_NE(none.log().find("policies"), std::string::npos) << none.log();
}

}  // namespace
}  // namespace ratelimitd::test::grpc_xds_test
