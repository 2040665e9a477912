// Issue 45 item 4 and issue 48 item 3: an xDS ACK says what is in force, and a config from the
// control plane takes the same road into the registry as a file reload. The test control plane
// (xds_control_plane.hpp), the real binary, a real redis-server and a real gRPC client of the
// rate limit service: a check issued the moment the ACK arrives answers by the new version; a
// refused version is NACKed with what is wrong, counted and audited as a refused reload, and the
// old one keeps serving; versions published faster than they apply are dropped but the last
// (never applied, never answered); and ratelimitd_reloads_total counts xDS applies as it
// counts file reloads.
#include "grpc/xds_control_plane.hpp"
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>

namespace ratelimitd::test::grpc_xds_apply_test {
namespace {

using namespace std::chrono_literals;

// A fresh audit log at `path` (a run repeated in one scratch directory appends to the last).
const std::string& fresh(const std::string& path) {
    std::filesystem::remove(path);
    return path;
}

struct Sidecar {
    Sidecar(const XdsControlPlane& cp, const std::string& redis_url, const std::string& audit_log)
        : server("prefix: rl\n", redis_url,
                 {"--grpc-listen", "127.0.0.1:0", "--xds-server", cp.address(), "--xds-backoff-initial", "100ms",
                  "--xds-backoff-max", "400ms", "--audit-log", fresh(audit_log)}),
          client(grpc_port_from_log(server.process().wait_for_log("grpc listening on", process_start_bound))),
          http(server.port()) {}

    // The limit the rule of `key`/`value` has in the config in force (0: no rule matches).
    std::uint32_t limit_of(const std::string& key, const std::string& value) {
        RlsResponse res;
        if (!client.call(rls_request("edge", {Descriptor{{{key, value}}, {}}}), res).ok()) return 0;
        return res.statuses_size() == 1 && res.statuses(0).has_current_limit()
                   ? res.statuses(0).current_limit().requests_per_unit()
                   : 0;
    }
    double metric(const std::string& series) { return sample(http.get("/metrics").body, series); }

    Ratelimitd server;
    RlsClient client;
    HttpClient http;
};

// Version `version`: a probe rule whose value names the version, at `per_hour`.
RateLimitConfig probe_at(const std::string& version, std::uint32_t per_hour) {
    return rls_config("edge", {{"probe", version, per_hour}});
}

// The versions of the xDS config_reload entries of `outcome` (applied, refused), in order.
std::vector<std::string> xds_versions(const std::string& audit_log, const std::string& outcome = "applied") {
    std::vector<std::string> out;
    std::ifstream in(audit_log);
    for (std::string line; std::getline(in, line);) {
        const auto entry = nlohmann::json::parse(line, nullptr, false);
        if (entry.is_discarded() || entry.value("source", "") != "xds") continue;
        if (entry.value("outcome", "") == outcome) out.push_back(entry.value("version", ""));
    }
    return out;
}

const char* const reloads_ok = "ratelimitd_reloads_total{result=\"success\"}";

TEST(GrpcXdsApply, TheAckComesOnceTheVersionServesAndEachApplyIsAReload) {
    RedisServer redis;
    XdsControlPlane cp;
    Sidecar s(cp, redis.url(), scratch_dir() + "/xds-apply-ack.log");
    const double reloads_before = s.metric(reloads_ok);
    for (std::uint32_t n = 1; n <= 4; ++n) {
        const std::string version = "v" + std::to_string(n);
        cp.set(version, {probe_at(version, 100 + n)});
        const auto ack = cp.await_reply(cp.current_nonce(), 10s);
        ASSERT_TRUE(ack) << s.server.process().log();
        EXPECT_FALSE(ack->nack) << ack->error_message;
        EXPECT_EQ(ack->version_info, version);
        // No wait: the ACK is only sent once a check answers by this version.
        EXPECT_EQ(s.limit_of("probe", version), 100 + n) << version;
        EXPECT_EQ(s.metric("ratelimitd_xds_config_info{version=\"" + version + "\"}"), 1);
        // Each apply is one reload, counted as a file reload is, and its time to force one sample.
        EXPECT_EQ(s.metric(reloads_ok), reloads_before + n);
        EXPECT_EQ(s.metric("ratelimitd_xds_apply_seconds_count"), n);
    }
    // A file reload goes the same road: counted once more, the control plane's rules kept.
    s.server.write_config("prefix: rl\n");
    s.server.process().signal(SIGHUP);
    ASSERT_TRUE(wait_until([&] { return s.metric(reloads_ok) == reloads_before + 5; }, 10s))
        << s.server.process().log();
    EXPECT_EQ(s.limit_of("probe", "v4"), 104u);
}

TEST(GrpcXdsApply, ARefusedVersionIsNackedAndTheOldOneKeepsServing) {
    RedisServer redis;
    XdsControlPlane cp;
    const std::string audit = scratch_dir() + "/xds-apply-nack.log";
    Sidecar s(cp, redis.url(), audit);
    cp.set("v1", {probe_at("v1", 7)});
    ASSERT_TRUE(cp.await_reply(cp.current_nonce(), 10s)) << s.server.process().log();
    const double failures_before = s.metric("ratelimitd_reloads_total{result=\"failure\"}");
    auto bad = probe_at("v2", 9);
    bad.mutable_descriptors(0)->mutable_rate_limit()->set_unit(ratelimit::config::ratelimit::v3::UNKNOWN);
    cp.set("v2", {bad});
    const auto nack = cp.await_reply(cp.current_nonce(), 10s);
    ASSERT_TRUE(nack) << s.server.process().log();
    EXPECT_TRUE(nack->nack);
    EXPECT_EQ(nack->version_info, "v1") << "a NACK names the version still in force";
    EXPECT_NE(nack->error_message.find("resources[0] (name \"edge-config\"): descriptors[0].rate_limit.unit: missing"),
              std::string::npos)
        << nack->error_message;
    EXPECT_EQ(s.limit_of("probe", "v1"), 7u);
    EXPECT_EQ(s.limit_of("probe", "v2"), 0u);
    EXPECT_EQ(s.metric("ratelimitd_xds_config_info{version=\"v1\"}"), 1);
    EXPECT_EQ(xds_versions(audit), std::vector<std::string>{"v1"});
    // Refused on the road a refused file takes: counted, audited with its reason, logged.
    EXPECT_EQ(s.metric("ratelimitd_reloads_total{result=\"failure\"}"), failures_before + 1);
    EXPECT_EQ(xds_versions(audit, "refused"), std::vector<std::string>{"v2"});
    EXPECT_NE(s.server.process().log().find("reload refused, the previous config keeps serving: xds version v2: "
                                            "resources[0]"),
              std::string::npos)
        << s.server.process().log();
}

// A control plane that publishes v2 and v3 while v1 (20,000 descriptors) is being applied: v1
// is applied and ACKed, v2 is dropped (never applied, never answered), v3 applied and ACKed.
TEST(GrpcXdsApply, VersionsPublishedWhileOneAppliesAreDroppedButTheLast) {
    RedisServer redis;
    XdsControlPlane cp;
    const std::string audit = scratch_dir() + "/xds-apply-burst.log";
    Sidecar s(cp, redis.url(), audit);
    cp.set("v0", {probe_at("v0", 1)});
    ASSERT_TRUE(cp.await_reply(cp.current_nonce(), 10s)) << s.server.process().log();
    std::vector<std::tuple<std::string, std::string, std::uint32_t>> many{{"probe", "v1", 11}};
    for (int i = 0; i < 20'000; ++i) many.emplace_back("user", "u" + std::to_string(i), 5);
    const auto nonces = cp.burst({XdsControlPlane::response("v1", {rls_config("edge", many)}),
                                  XdsControlPlane::response("v2", {probe_at("v2", 12)}),
                                  XdsControlPlane::response("v3", {probe_at("v3", 13)})});
    const auto ack = cp.await_reply(nonces[2], 20s);
    ASSERT_TRUE(ack) << s.server.process().log();
    EXPECT_FALSE(ack->nack) << ack->error_message;
    EXPECT_EQ(ack->version_info, "v3");
    EXPECT_EQ(s.limit_of("probe", "v3"), 13u);
    EXPECT_EQ(s.limit_of("probe", "v2"), 0u);
    for (const auto& reply : cp.replies()) EXPECT_NE(reply.response_nonce, nonces[1]) << "v2 was answered";
    EXPECT_EQ(xds_versions(audit), (std::vector<std::string>{"v0", "v1", "v3"}));
    EXPECT_EQ(s.metric("ratelimitd_xds_superseded_total"), 1);
    EXPECT_EQ(s.metric("ratelimitd_xds_updates_total{outcome=\"accepted\"}"), 3);
}

}  // namespace
}  // namespace ratelimitd::test::grpc_xds_apply_test
