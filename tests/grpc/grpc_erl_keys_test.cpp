// envoy_key_layout: envoyproxy-ratelimit: ratelimitd counts Envoy's descriptors on
// envoyproxy/ratelimit's own Redis keys, as its pods count them, so that during a rolling swap
// old pods and new ones spend one budget. Every key here is computed by the test from
// envoyproxy/ratelimit's published layout (src/limiter/cache_key.go: CACHE_KEY_PREFIX +
// domain + "_" + key + "_" + value + "_" + window start, the start being now / unit * unit with
// a month of 30 days), never from ratelimitd's code; a pod's writes are INCRBY + EXPIRE from
// redis-cli's side. The real binary, a real redis-server, a client from proto/.
#include "support/concurrent_calls.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::test::grpc_erl_keys_test {
namespace {

using namespace std::chrono_literals;

constexpr const char* prefix = "erlpfx_";
constexpr std::int64_t hour = 3600;
constexpr std::int64_t week = 7 * 24 * 3600;
constexpr std::int64_t month = 30 * 24 * 3600;  // envoyproxy/ratelimit's UnitToDivider(MONTH)

std::string config(const std::string& denied_calls) {
    return "envoy_denied_calls: " + denied_calls + R"(
domains:
  - domain: edge
    descriptors:
      - key: user
        rate_limit: {unit: hour, requests_per_unit: 10}
      - key: org
        rate_limit: {unit: hour, requests_per_unit: 100}
      - key: m
        rate_limit: {unit: month, requests_per_unit: 5}
      - key: w
        rate_limit: {unit: week, requests_per_unit: 5}
)";
}

std::int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// envoyproxy/ratelimit's key of descriptor {key: value} of domain "edge" for `unit` seconds.
std::string erl_key(const std::string& key, const std::string& value, std::int64_t unit = hour,
                    std::int64_t at = now_s()) {
    return std::string(prefix) + "edge_" + key + "_" + value + "_" + std::to_string(at / unit * unit);
}

/// Counting tests run in one hour window: when less than `margin` of it is left, wait for the
/// next one (at most `margin`), so no window rolls over while a test counts.
void stay_in_one_hour(std::chrono::seconds margin = 30s) {
    while (hour - now_s() % hour < margin.count()) std::this_thread::sleep_for(200ms);
}

Descriptor one(const std::string& key, const std::string& value, std::optional<std::uint64_t> hits = {}) {
    return Descriptor{{{key, value}}, hits};
}

struct Sidecar {
    Sidecar(const std::string& redis_url, const std::string& denied_calls, const std::string& jitter = "60s")
        : server(config(denied_calls), redis_url,
                 {"--grpc-listen", "127.0.0.1:0", "--store-timeout", "2s", "--envoy-key-layout",
                  "envoyproxy-ratelimit", "--envoy-key-prefix", prefix, "--envoy-expiration-jitter", jitter}),
          client(grpc_port_from_log(server.process().wait_for_log("grpc listening on", process_start_bound))) {}
    RlsResponse call(const RlsRequest& req) {
        RlsResponse res;
        const auto status = client.call(req, res);
        EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
        return res;
    }
    RlsResponse::Code spend(const std::string& user, std::uint64_t n) {
        return call(rls_request("edge", {one("user", user, n)})).overall_code();
    }
    Ratelimitd server;
    RlsClient client;
};

/// What an envoyproxy/ratelimit pod does for one descriptor: INCRBY hits, EXPIRE unit seconds.
long long pod_charges(const RedisServer& redis, const std::string& key, long long hits, std::int64_t unit) {
    const long long count = redis.integer({"INCRBY", key, std::to_string(hits)});
    redis.command({"EXPIRE", key, std::to_string(unit)});
    return count;
}

long long count_of(const RedisServer& redis, const std::string& key) {
    const std::string v = redis.command({"GET", key});
    return v == "(nil)" ? 0 : std::stoll(v);
}

TEST(GrpcErlKeys, APodsChargesAndOursCountOneBudgetUnderItsKeyNames) {
    stay_in_one_hour();
    RedisServer redis;
    Sidecar s(redis.url(), "refuse");
    const std::string key = erl_key("user", "alice");
    EXPECT_EQ(pod_charges(redis, key, 4, hour), 4);
    auto res = s.call(rls_request("edge", {one("user", "alice")}));
    EXPECT_EQ(res.overall_code(), RlsResponse::OK);
    EXPECT_EQ(res.statuses(0).limit_remaining(), 5u) << "the pod's 4 and this 1 of 10";
    EXPECT_EQ(count_of(redis, key), 5) << "charged under the pod's key";
    EXPECT_EQ(pod_charges(redis, key, 5, hour), 10) << "the pod sees ours";
    res = s.call(rls_request("edge", {one("user", "alice")}));
    EXPECT_EQ(res.overall_code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(res.statuses(0).limit_remaining(), 0u);
    EXPECT_EQ(res.statuses(0).duration_until_reset().seconds(), hour - now_s() % hour) << "the window's end";

    // A key ratelimitd opens: the pod's name, and its TTL the unit plus at most the jitter.
    const std::string fresh = erl_key("user", "bob");
    EXPECT_EQ(s.spend("bob", 3), RlsResponse::OK);
    EXPECT_EQ(count_of(redis, fresh), 3);
    const long long ttl = redis.integer({"TTL", fresh});
    EXPECT_GE(ttl, hour - 2);
    EXPECT_LT(ttl, hour + 60) << "EXPIRE unit + jitter in [0, 60)";
    for (const auto& k : redis.keys()) EXPECT_EQ(k.rfind(prefix, 0), 0u) << k << ": only the pods' keys";
}

TEST(GrpcErlKeys, TheJitterSpreadsTheTtlsWithinItsBound) {
    stay_in_one_hour();
    RedisServer redis;
    Sidecar s(redis.url(), "refuse", "600s");
    long long least = hour + 600, most = 0;
    for (int i = 0; i < 40; ++i) {
        const std::string user = "j" + std::to_string(i);
        ASSERT_EQ(s.spend(user, 1), RlsResponse::OK);
        const long long ttl = redis.integer({"TTL", erl_key("user", user)});
        least = std::min(least, ttl);
        most = std::max(most, ttl);
    }
    EXPECT_GE(least, hour - 2);
    EXPECT_LT(most, hour + 600);
    EXPECT_GT(most - least, 60) << "40 draws in [0, 600) spread";
}

// Three sidecars on one Redis, calls at once: exactly the limit admitted, every call counted
// (a pod INCRBYs past the limit too), as envoyproxy/ratelimit's own pods would count them.
void exactly_the_limit_across_three(const std::string& denied_calls) {
    stay_in_one_hour(45s);
    RedisServer redis;
    std::vector<std::unique_ptr<Sidecar>> fleet;
    for (int i = 0; i < 3; ++i) fleet.push_back(std::make_unique<Sidecar>(redis.url(), denied_calls));
    const CodeCounts counts = count_codes(45, [&](int i) {
        return fleet[static_cast<std::size_t>(i % 3)]->client.code(rls_request("edge", {one("user", "shared")}));
    });
    EXPECT_EQ(counts.ok, 10);
    EXPECT_EQ(counts.over, 35);
    EXPECT_EQ(counts.failed, 0);
    EXPECT_EQ(count_of(redis, erl_key("user", "shared")), 45);
}

TEST(GrpcErlKeys, ThreeSidecarsAdmitExactlyTheLimitUnderCharge) { exactly_the_limit_across_three("charge"); }
TEST(GrpcErlKeys, ThreeSidecarsAdmitExactlyTheLimitUnderRefuse) { exactly_the_limit_across_three("refuse"); }

// Envoy Gateway's usage-based limit: the request phase asks with hits_addend 0, the response
// phase sends the cost at stream end. envoyproxy/ratelimit meters it past the limit whatever
// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT says (one descriptor over is incremented either way),
// and a check-only call is over only past the limit.
/// `counted`: the counter as it stands, or nothing where it cannot be read (the embedded
/// store past the limit: the answer says over, not by how much).
void two_phase(Sidecar& s, const std::function<std::optional<long long>()>& counted) {
    const auto ask = [&s] { return s.call(rls_request("edge", {one("user", "llm", 0)})).overall_code(); };
    const auto expect_count = [&](long long n, const char* why) {
        if (const auto c = counted()) {
            EXPECT_EQ(*c, n) << why;
        }
    };
    EXPECT_EQ(ask(), RlsResponse::OK);
    expect_count(0, "asking charges nothing");
    EXPECT_EQ(s.spend("llm", 7), RlsResponse::OK);
    EXPECT_EQ(ask(), RlsResponse::OK);
    EXPECT_EQ(s.spend("llm", 3), RlsResponse::OK) << "10 of 10";
    expect_count(10, "7 + 3");
    EXPECT_EQ(ask(), RlsResponse::OK) << "at the limit, not past it: envoyproxy/ratelimit's check-only";
    EXPECT_EQ(s.spend("llm", 8), RlsResponse::OVER_LIMIT);
    expect_count(18, "metered past the limit");
    EXPECT_EQ(ask(), RlsResponse::OVER_LIMIT) << "the next request phase is denied";
    expect_count(18, "asking charged nothing");
}

TEST(GrpcErlKeys, TwoPhaseCostsAreMeteredExactlyUnderCharge) {
    stay_in_one_hour();
    RedisServer redis;
    Sidecar s(redis.url(), "charge");
    two_phase(s, [&]() -> std::optional<long long> { return count_of(redis, erl_key("user", "llm")); });
}

TEST(GrpcErlKeys, TwoPhaseCostsAreMeteredExactlyUnderRefuse) {
    stay_in_one_hour();
    RedisServer redis;
    Sidecar s(redis.url(), "refuse");
    two_phase(s, [&]() -> std::optional<long long> { return count_of(redis, erl_key("user", "llm")); });
}

TEST(GrpcErlKeys, TheEmbeddedStoreMetersTwoPhaseCostsAlike) {
    stay_in_one_hour();
    Sidecar s("", "refuse", "0s");
    two_phase(s, [&]() -> std::optional<long long> {
        const auto res = s.call(rls_request("edge", {one("user", "llm", 0)}));
        if (res.overall_code() != RlsResponse::OK) return std::nullopt;
        return 10 - static_cast<long long>(res.statuses(0).limit_remaining());
    });
}

// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT=false (charge): every descriptor of a call is
// incremented, over or not. =true (refuse): when one goes past its limit, only those that do
// are incremented (envoyproxy/ratelimit's fixed_cache_impl.go getHitsAddend).
TEST(GrpcErlKeys, ChargeIncrementsEveryDescriptorOfACallPastTheLimit) {
    stay_in_one_hour();
    RedisServer redis;
    Sidecar s(redis.url(), "charge");
    pod_charges(redis, erl_key("user", "u1"), 9, hour);
    const auto res = s.call(rls_request("edge", {one("user", "u1", 2), one("org", "o1", 2)}));
    EXPECT_EQ(res.overall_code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(res.statuses(0).code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(res.statuses(1).code(), RlsResponse::OK);
    EXPECT_EQ(res.statuses(1).limit_remaining(), 98u);
    EXPECT_EQ(count_of(redis, erl_key("user", "u1")), 11);
    EXPECT_EQ(count_of(redis, erl_key("org", "o1")), 2);
}

TEST(GrpcErlKeys, RefuseIncrementsOnlyTheDescriptorsGoingPastTheirLimit) {
    stay_in_one_hour();
    RedisServer redis;
    Sidecar s(redis.url(), "refuse");
    pod_charges(redis, erl_key("user", "u1"), 9, hour);
    const auto res = s.call(rls_request("edge", {one("user", "u1", 2), one("org", "o1", 2)}));
    EXPECT_EQ(res.overall_code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(res.statuses(0).code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(res.statuses(1).code(), RlsResponse::OK);
    EXPECT_EQ(res.statuses(1).limit_remaining(), 100u);
    EXPECT_EQ(count_of(redis, erl_key("user", "u1")), 11) << "the one going over is incremented";
    EXPECT_EQ(count_of(redis, erl_key("org", "o1")), 0) << "the others are not";
    // Within every limit: all are incremented.
    const auto fits = s.call(rls_request("edge", {one("user", "u2", 2), one("org", "o1", 2)}));
    EXPECT_EQ(fits.overall_code(), RlsResponse::OK);
    EXPECT_EQ(count_of(redis, erl_key("user", "u2")), 2);
    EXPECT_EQ(count_of(redis, erl_key("org", "o1")), 2);
}

// Month (30 days from the epoch, envoyproxy/ratelimit's divider, not the calendar month) and
// week windows: the key names its window start. Such a window rolls over at most once a week;
// a test that straddles that instant accepts the next window's name.
TEST(GrpcErlKeys, MonthAndWeekWindowsStartWhereEnvoyproxyRatelimitStartsThem) {
    RedisServer redis;
    Sidecar s(redis.url(), "refuse");
    for (const auto& [key, unit] : {std::pair<std::string, std::int64_t>{"m", month}, {"w", week}}) {
        const std::int64_t before = now_s();
        const auto res = s.call(rls_request("edge", {one(key, "v")}));
        const std::int64_t after = now_s();
        EXPECT_EQ(res.overall_code(), RlsResponse::OK);
        const long long in_before = count_of(redis, erl_key(key, "v", unit, before));
        const long long in_after = count_of(redis, erl_key(key, "v", unit, after));
        if (before / unit == after / unit) {
            EXPECT_EQ(in_before, 1) << key;
        } else {
            EXPECT_EQ(in_before + in_after, 1) << key << ": the window rolled over during the call";
        }
        const auto reset = res.statuses(0).duration_until_reset().seconds();
        EXPECT_LE(reset, unit - after % unit + 1) << key;
        EXPECT_GE(reset, unit - after % unit - 1) << key;
    }
}

// On a Redis Cluster envoyproxy/ratelimit's keys carry no hash tag, so a call's descriptors lie
// in several slots and are decided slot group by slot group, in ascending slot order
// (docs/envoy.md): under charge every group is charged; under refuse a group going past its
// limit keeps the later groups from being charged, and the groups before it keep theirs.
struct ClusterCounts {
    const RedisCluster& cluster;
    int slot(const std::string& key) const { return static_cast<int>(cluster.integer(0, {"CLUSTER", "KEYSLOT", key})); }
    long long count(const std::string& key) const {
        const std::string v = cluster.command(cluster.owner_of(slot(key)), {"GET", key});
        return v == "(nil)" ? 0 : std::stoll(v);
    }
    void pod_charges(const std::string& key, long long hits) const {
        const int node = cluster.owner_of(slot(key));
        cluster.command(node, {"INCRBY", key, std::to_string(hits)});
        cluster.command(node, {"EXPIRE", key, std::to_string(hour)});
    }
};

void cross_slot_call(const std::string& denied_calls) {
    stay_in_one_hour();
    RedisCluster cluster(3);
    Sidecar s(cluster.url(), denied_calls);
    const ClusterCounts c{cluster};
    const std::string user = erl_key("user", "u1");
    const std::string org = erl_key("org", "o1");
    ASSERT_NE(c.slot(user), c.slot(org)) << "the test needs two slots";
    c.pod_charges(user, 9);
    const auto res = s.call(rls_request("edge", {one("user", "u1", 2), one("org", "o1", 2)}));
    EXPECT_EQ(res.overall_code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(res.statuses(0).code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(res.statuses(1).code(), RlsResponse::OK);
    EXPECT_EQ(c.count(user), 11);
    const bool org_first = c.slot(org) < c.slot(user);
    EXPECT_EQ(c.count(org), denied_calls == "charge" || org_first ? 2 : 0) << "org's slot first: " << org_first;
}

TEST(GrpcErlKeys, OnAClusterChargeChargesEverySlotGroup) { cross_slot_call("charge"); }
TEST(GrpcErlKeys, OnAClusterRefuseStopsAtTheGroupGoingOverAndKeepsTheOnesBefore) { cross_slot_call("refuse"); }

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_keys_test
