// Envoy's rate limit service end to end: a gRPC client built from proto/ against the real
// binary and a real redis-server, on envoyproxy/ratelimit's own config format: exact
// admission under 64 concurrent calls across three sidecars, hits_addend (request and
// descriptor), shadow, unlimited and no match, all-or-nothing, nested / value / prefix rules,
// ratelimitd's algorithm and on_store_error extensions, failure modes with Redis killed,
// unknown domains, and a reload between calls.
#include "support/concurrent_calls.hpp"
#include "support/held_window.hpp"
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>

namespace ratelimitd::test::grpc_rls_test {
namespace {

using namespace std::chrono_literals;

// Hours, not minutes, where counts are asserted: the windows are aligned to the unit, and a
// test crossing a window's end would see it start over; one that may (its calls' counts add
// up across calls) runs again from a new Redis should an hour begin meanwhile (in_one_window).
const char* envoy_rules = R"(domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: hour, requests_per_unit: 5}
  - key: exact
    rate_limit: {unit: hour, requests_per_unit: 20}
  - key: cost
    rate_limit: {unit: hour, requests_per_unit: 10}
  - key: tenant
    value: gold
    rate_limit: {unit: hour, requests_per_unit: 10, name: gold}
  - key: tenant
    value: "free*"
    rate_limit: {unit: minute, requests_per_unit: 1, name: free}
  - key: path
    value: /shadow
    shadow_mode: true
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: internal
    rate_limit: {unlimited: true}
  - key: blocked
    rate_limit: {unit: second, requests_per_unit: 0}
  - key: strict
    on_store_error: deny
    rate_limit: {unit: hour, requests_per_unit: 100}
  - key: bucket
    algorithm: token_bucket
    rate_limit: {unit: hour, requests_per_unit: 2}
  - key: api_key
    descriptors:
      - key: path
        rate_limit: {unit: hour, requests_per_unit: 3, name: per-key-path}
)";

// A config file whose Envoy rules are in a file of their own, as envoyproxy/ratelimit has them.
std::string config_with_rules() {
    const auto path = scratch_dir() + "/envoy-rules-" + std::to_string(free_port()) + ".yaml";
    std::ofstream(path) << envoy_rules;
    return "envoy_config: " + path + "\n";
}

const std::vector<std::string> grpc_any_port{"--grpc-listen", "127.0.0.1:0"};

unsigned short grpc_port(Ratelimitd& server) {
    return grpc_port_from_log(server.process().wait_for_log("grpc listening on", process_start_bound));
}

Descriptor one(const std::string& key, const std::string& value, std::optional<std::uint64_t> hits = {}) {
    return Descriptor{{{key, value}}, hits};
}

struct Sidecar {
    explicit Sidecar(const std::string& redis_url, const std::vector<std::string>& extra = {})
        : server(config_with_rules(), redis_url, with_grpc(extra)), client(grpc_port(server)) {}
    static std::vector<std::string> with_grpc(std::vector<std::string> extra) {
        extra.insert(extra.end(), grpc_any_port.begin(), grpc_any_port.end());
        return extra;
    }
    RlsResponse call(const RlsRequest& req) {
        RlsResponse res;
        const auto status = client.call(req, res);
        EXPECT_TRUE(status.ok()) << status.error_message();
        return res;
    }
    Ratelimitd server;
    RlsClient client;
};

TEST(GrpcRls, ExactAdmissionUnder64ConcurrentCallsAcrossThreeSidecars) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        std::vector<std::unique_ptr<Sidecar>> fleet;
        for (int i = 0; i < 3; ++i) fleet.push_back(std::make_unique<Sidecar>(redis.url()));
        const CodeCounts counts = count_codes(64, [&](int i) {
            return fleet[static_cast<std::size_t>(i % 3)]->client.code(rls_request("edge", {one("exact", "shared")}));
        });
        EXPECT_EQ(counts.ok, 20);
        EXPECT_EQ(counts.over, 44);
        EXPECT_EQ(counts.failed, 0);
    });
}

TEST(GrpcRls, AnswerCarriesTheLimitTheRemainderTheResetAndTheHeaders) {
    RedisServer redis;
    Sidecar s(redis.url());
    const auto res = s.call(rls_request("edge", {one("remote_address", "10.0.0.1")}));
    ASSERT_EQ(res.statuses_size(), 1);
    const auto& st = res.statuses(0);
    EXPECT_EQ(res.overall_code(), RlsResponse::OK);
    EXPECT_EQ(st.code(), RlsResponse::OK);
    EXPECT_EQ(st.current_limit().requests_per_unit(), 5u);
    EXPECT_EQ(st.current_limit().unit(), RlsResponse::RateLimit::HOUR);
    EXPECT_EQ(st.limit_remaining(), 4u);
    EXPECT_GT(st.duration_until_reset().seconds(), 0);
    EXPECT_LE(st.duration_until_reset().seconds(), 3600);
    std::map<std::string, std::string> headers;
    for (const auto& h : res.response_headers_to_add()) headers[h.key()] = h.value();
    EXPECT_NE(headers["RateLimit-Policy"].find(";q=5;w=3600"), std::string::npos) << headers["RateLimit-Policy"];
    EXPECT_NE(headers["RateLimit"].find(";r=4;"), std::string::npos) << headers["RateLimit"];
    // Each value of a key without a value counts on its own.
    EXPECT_EQ(s.call(rls_request("edge", {one("remote_address", "10.0.0.2")})).statuses(0).limit_remaining(), 4u);
}

TEST(GrpcRls, XRateLimitFieldsAreAddedWhenConfigured) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar plain(redis.url());
        Sidecar with_x(redis.url(), {"--grpc-x-ratelimit-headers", "on"});
        auto headers_of = [](const RlsResponse& res) {
            std::map<std::string, std::string> headers;
            for (const auto& h : res.response_headers_to_add()) headers[h.key()] = h.value();
            return headers;
        };
        const auto plain_headers = headers_of(plain.call(rls_request("edge", {one("remote_address", "10.9.0.1")})));
        EXPECT_EQ(plain_headers.count("X-RateLimit-Limit"), 0u) << "off by default";
        // Same Redis, same key: 1 of 5 per hour spent above.
        auto headers = headers_of(with_x.call(rls_request("edge", {one("remote_address", "10.9.0.1")})));
        EXPECT_EQ(headers["X-RateLimit-Limit"], "5");
        EXPECT_EQ(headers["X-RateLimit-Remaining"], "3");
        const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
        const auto reset = std::stoll(headers["X-RateLimit-Reset"]);
        EXPECT_GT(reset, now_s - 1);
        EXPECT_LE(reset, now_s + 3601);
        EXPECT_EQ(headers.count("Retry-After"), 0u);
        EXPECT_FALSE(headers["RateLimit"].empty());
        for (int i = 0; i < 3; ++i) with_x.call(rls_request("edge", {one("remote_address", "10.9.0.1")}));
        const auto over = with_x.call(rls_request("edge", {one("remote_address", "10.9.0.1")}));
        EXPECT_EQ(over.overall_code(), RlsResponse::OVER_LIMIT);
        headers = headers_of(over);
        EXPECT_EQ(headers["X-RateLimit-Remaining"], "0");
        EXPECT_GE(std::stoll(headers["Retry-After"]), 1);
    });
}

// grpc_response_headers: none sends no field at all (as envoyproxy/ratelimit by default); erl
// sends its three by the names configured, natively too.
TEST(GrpcRls, ResponseHeadersCanBeNoneOrEnvoyproxyRatelimits) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar none(redis.url(), {"--grpc-response-headers", "none", "--grpc-x-ratelimit-headers", "on"});
        const auto quiet = none.call(rls_request("edge", {one("remote_address", "10.8.0.1")}));
        EXPECT_EQ(quiet.statuses(0).limit_remaining(), 4u);
        EXPECT_EQ(quiet.response_headers_to_add_size(), 0);
        Sidecar erl(redis.url(), {"--grpc-response-headers", "erl", "--grpc-reset-header", "X-Reset-In"});
        const auto res = erl.call(rls_request("edge", {one("remote_address", "10.8.0.1"), one("exact", "e")}));
        std::map<std::string, std::string> headers;
        for (const auto& h : res.response_headers_to_add()) headers[h.key()] = h.value();
        ASSERT_EQ(headers.size(), 3u) << res.DebugString();
        EXPECT_EQ(headers["RateLimit-Limit"], "5") << "the descriptor with the least remaining (3 of 5)";
        EXPECT_EQ(headers["RateLimit-Remaining"], "3");
        EXPECT_GE(std::stoll(headers["X-Reset-In"]), 1);
        EXPECT_LE(std::stoll(headers["X-Reset-In"]), 3600);
    });
}

TEST(GrpcRls, HitsAddendOfTheRequestAndOfADescriptorIsTheCost) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar s(redis.url());
        EXPECT_EQ(s.call(rls_request("edge", {one("cost", "a")}, 3)).statuses(0).limit_remaining(), 7u);
        // The descriptor's own hits_addend wins over the request's.
        EXPECT_EQ(s.call(rls_request("edge", {one("cost", "a", 5)}, 3)).statuses(0).limit_remaining(), 2u);
        const auto over = s.call(rls_request("edge", {one("cost", "a")}, 3));
        EXPECT_EQ(over.overall_code(), RlsResponse::OVER_LIMIT);
        EXPECT_EQ(s.call(rls_request("edge", {one("cost", "a")}, 2)).statuses(0).limit_remaining(), 0u)
            << "the denied call charged nothing";
    });
}

TEST(GrpcRls, ADeniedCallChargesNoneOfItsDescriptors) {
    RedisServer redis;
    Sidecar s(redis.url());
    const auto denied = s.call(rls_request("edge", {one("remote_address", "10.0.0.9"), one("blocked", "x")}));
    EXPECT_EQ(denied.overall_code(), RlsResponse::OVER_LIMIT);
    ASSERT_EQ(denied.statuses_size(), 2);
    EXPECT_EQ(denied.statuses(1).code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(denied.statuses(0).code(), RlsResponse::OK);
    EXPECT_EQ(s.call(rls_request("edge", {one("remote_address", "10.0.0.9")})).statuses(0).limit_remaining(), 4u)
        << "the first charge of 10.0.0.9 is this one";
}

TEST(GrpcRls, ShadowDescriptorIsChargedButAnswersOk) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar s(redis.url());
        for (int i = 0; i < 3; ++i) {
            const auto res = s.call(rls_request("edge", {one("path", "/shadow")}));
            EXPECT_EQ(res.overall_code(), RlsResponse::OK);
            EXPECT_EQ(res.statuses(0).code(), RlsResponse::OK);
            EXPECT_EQ(res.statuses(0).limit_remaining(), 0u);
        }
        HttpClient http(s.server.port());
        const auto metrics = http.get("/metrics").body;
        EXPECT_NE(metrics.find("verdict=\"shadow_denied\"} 2"), std::string::npos) << metrics;
    });
}

TEST(GrpcRls, UnlimitedAndUnmatchedAnswerOkWithNoLimitAndCountNothing) {
    RedisServer redis;
    Sidecar s(redis.url());
    const auto res = s.call(rls_request("edge", {one("internal", "x"), one("nobody", "y"), one("api_key", "k")}));
    EXPECT_EQ(res.overall_code(), RlsResponse::OK);
    ASSERT_EQ(res.statuses_size(), 3);
    for (const auto& st : res.statuses()) {
        EXPECT_EQ(st.code(), RlsResponse::OK);
        EXPECT_FALSE(st.has_current_limit());
    }
    EXPECT_TRUE(redis.keys().empty());
}

TEST(GrpcRls, NestedValueAndPrefixRulesMatchAsEnvoyRatelimitDoes) {
    RedisServer redis;
    Sidecar s(redis.url());
    const auto nested = s.call(rls_request("edge", {Descriptor{{{"api_key", "k1"}, {"path", "/a"}}, {}}}));
    EXPECT_EQ(nested.statuses(0).current_limit().name(), "per-key-path");
    EXPECT_EQ(nested.statuses(0).current_limit().requests_per_unit(), 3u);
    const auto gold = s.call(rls_request("edge", {one("tenant", "gold")}));
    EXPECT_EQ(gold.statuses(0).current_limit().name(), "gold");
    EXPECT_EQ(gold.statuses(0).limit_remaining(), 9u);
    const auto free = s.call(rls_request("edge", {one("tenant", "free-trial")}));
    EXPECT_EQ(free.statuses(0).current_limit().name(), "free");
    EXPECT_EQ(free.statuses(0).current_limit().unit(), RlsResponse::RateLimit::MINUTE);
    const auto silver = s.call(rls_request("edge", {one("tenant", "silver")}));
    EXPECT_FALSE(silver.statuses(0).has_current_limit()) << "no rule for that value";
}

TEST(GrpcRls, AlgorithmExtensionDecides) {
    RedisServer redis;
    Sidecar s(redis.url());
    const auto req = rls_request("edge", {one("bucket", "b")});
    EXPECT_EQ(s.client.code(req), RlsResponse::OK);
    EXPECT_EQ(s.client.code(req), RlsResponse::OK);
    EXPECT_EQ(s.client.code(req), RlsResponse::OVER_LIMIT);
}

TEST(GrpcRls, StoreDownAnswersByEachDescriptorsFailureModeWithinTheDeadline) {
    RedisServer redis;
    Sidecar s(redis.url(), {"--store-timeout", "100ms"});
    ASSERT_EQ(s.client.code(rls_request("edge", {one("remote_address", "10.1.1.1")})), RlsResponse::OK);
    redis.pause();  // a store that hangs: the deadline must answer
    for (const auto& [key, expected] : {std::pair{"remote_address", RlsResponse::OK},
                                        std::pair{"strict", RlsResponse::OVER_LIMIT}}) {
        const auto start = std::chrono::steady_clock::now();
        RlsResponse res;
        const auto status = s.client.call(rls_request("edge", {one(key, "v")}), res, 3s);
        const auto took = std::chrono::steady_clock::now() - start;
        ASSERT_TRUE(status.ok()) << key << ": " << status.error_message();
        EXPECT_EQ(res.overall_code(), expected) << key;
        EXPECT_LT(took, 1s) << key;
    }
    redis.resume();
    redis.kill_hard();
    EXPECT_EQ(s.client.code(rls_request("edge", {one("remote_address", "10.1.1.2")})), RlsResponse::OK);
    EXPECT_EQ(s.client.code(rls_request("edge", {one("strict", "v")})), RlsResponse::OVER_LIMIT);
}

// As envoyproxy/ratelimit answers it: a domain no config names limits nothing.
TEST(GrpcRls, UnknownDomainAnswersOkWithNoLimitAndChargesNothing) {
    RedisServer redis;
    Sidecar s(redis.url());
    RlsResponse res;
    const auto status = s.client.call(rls_request("nowhere", {one("remote_address", "1"), one("k", "v")}), res);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(res.overall_code(), RlsResponse::OK);
    ASSERT_EQ(res.statuses_size(), 2);
    for (const auto& st : res.statuses()) {
        EXPECT_EQ(st.code(), RlsResponse::OK);
        EXPECT_FALSE(st.has_current_limit());
    }
    EXPECT_TRUE(redis.keys().empty());
}

TEST(GrpcRls, AReloadAppliesToTheNextCall) {
    RedisServer redis;
    const std::string before = "domains:\n  - domain: live\n    descriptors:\n      - key: k\n"
                               "        rate_limit: {unit: hour, requests_per_unit: 2}\n";
    Ratelimitd server(before, redis.url(), grpc_any_port);
    RlsClient client(grpc_port(server));
    RlsResponse res;
    ASSERT_TRUE(client.call(rls_request("live", {one("k", "v")}), res).ok());
    EXPECT_EQ(res.statuses(0).current_limit().requests_per_unit(), 2u);
    std::string after = before;
    after.replace(after.find("requests_per_unit: 2"), 20, "requests_per_unit: 7");
    server.write_config(after);
    EXPECT_TRUE(wait_until(
        [&] {
            RlsResponse r;
            return client.call(rls_request("live", {one("k", "w")}), r).ok() &&
                   r.statuses(0).current_limit().requests_per_unit() == 7u;
        },
        10s));
}

}  // namespace
}  // namespace ratelimitd::test::grpc_rls_test
