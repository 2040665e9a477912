// A descriptor's own hits_addend of 0 (Envoy 1.29+, field 3 of RateLimitDescriptor, a
// wrapper): the descriptor is checked without being charged, as Envoy Gateway's request phase
// of a usage-based limit asks it: OVER_LIMIT once nothing is left, else OK, spending nothing.
// The real binary, a real redis-server, a client from proto/.
#include "support/concurrent_calls.hpp"
#include "support/held_window.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>

namespace ratelimitd::test::grpc_check_only_test {
namespace {

using namespace std::chrono_literals;

// Hours where counts are asserted: the windows are aligned to the unit.
const char* const config = R"(domains:
  - domain: llm
    descriptors:
      - key: tokens
        rate_limit: {unit: hour, requests_per_unit: 5}
      - key: budget
        rate_limit: {unit: hour, requests_per_unit: 10}
      - key: calls
        rate_limit: {unit: hour, requests_per_unit: 100}
)";

Descriptor one(const std::string& key, const std::string& value, std::optional<std::uint64_t> hits = {}) {
    return Descriptor{{{key, value}}, hits};
}

struct Sidecar {
    explicit Sidecar(const std::string& redis_url)
        : server(config, redis_url, {"--grpc-listen", "127.0.0.1:0", "--store-timeout", "2s"}),
          client(grpc_port_from_log(server.process().wait_for_log("grpc listening on", process_start_bound))) {}
    RlsResponse call(const RlsRequest& req) {
        RlsResponse res;
        const auto status = client.call(req, res);
        EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
        return res;
    }
    Ratelimitd server;
    RlsClient client;
};

/// Spends u1's 5 tokens with check-only calls between: each answers as the counter stands.
void check_only_sequence(Sidecar& s) {
    for (int i = 0; i < 3; ++i) {
        const auto res = s.call(rls_request("llm", {one("tokens", "u1", 0)}));
        EXPECT_EQ(res.overall_code(), RlsResponse::OK);
        EXPECT_EQ(res.statuses(0).limit_remaining(), 5u) << "nothing charged";
        EXPECT_EQ(res.statuses(0).current_limit().requests_per_unit(), 5u);
    }
    EXPECT_EQ(s.call(rls_request("llm", {one("tokens", "u1", 4)})).statuses(0).limit_remaining(), 1u);
    EXPECT_EQ(s.call(rls_request("llm", {one("tokens", "u1", 0)})).overall_code(), RlsResponse::OK) << "1 left";
    EXPECT_EQ(s.call(rls_request("llm", {one("tokens", "u1", 1)})).statuses(0).limit_remaining(), 0u);
    const auto spent = s.call(rls_request("llm", {one("tokens", "u1", 0)}));
    EXPECT_EQ(spent.overall_code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(spent.statuses(0).code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(spent.statuses(0).limit_remaining(), 0u);
}

TEST(GrpcCheckOnly, HitsAddendZeroChargesNothingAndDeniesOnceNothingIsLeft) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar s(redis.url());
        check_only_sequence(s);
    });
}

TEST(GrpcCheckOnly, TheEmbeddedStoreAnswersCheckOnlyDescriptorsTheSame) {
    in_one_window(1h, [&](int) {
        Sidecar s("");
        check_only_sequence(s);
    });
}

TEST(GrpcCheckOnly, ASpentCheckOnlyDescriptorDeniesTheCallAndChargesNoneOfTheOthers) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar s(redis.url());
        ASSERT_EQ(s.call(rls_request("llm", {one("tokens", "u2", 5)})).statuses(0).limit_remaining(), 0u);
        const auto res = s.call(rls_request("llm", {one("calls", "u2"), one("tokens", "u2", 0)}));
        EXPECT_EQ(res.overall_code(), RlsResponse::OVER_LIMIT);
        ASSERT_EQ(res.statuses_size(), 2);
        EXPECT_EQ(res.statuses(1).code(), RlsResponse::OVER_LIMIT);
        EXPECT_EQ(res.statuses(0).code(), RlsResponse::OK);
        EXPECT_EQ(s.call(rls_request("llm", {one("calls", "u2")})).statuses(0).limit_remaining(), 99u)
            << "the denied call charged nothing";
        // Beside a charged descriptor with room, a check-only one with room charges only the other.
        const auto both = s.call(rls_request("llm", {one("calls", "u3"), one("budget", "u3", 0)}));
        EXPECT_EQ(both.overall_code(), RlsResponse::OK);
        EXPECT_EQ(both.statuses(0).limit_remaining(), 99u);
        EXPECT_EQ(both.statuses(1).limit_remaining(), 10u);
    });
}

/// EVAL and EVALSHA calls Redis has served so far (INFO commandstats).
long long script_calls(const RedisServer& redis) {
    const std::string stats = redis.command({"INFO", "commandstats"});
    long long calls = 0;
    for (const std::string name : {"cmdstat_evalsha:calls=", "cmdstat_eval:calls="}) {
        const auto at = stats.find(name);
        if (at != std::string::npos) calls += std::stoll(stats.substr(at + name.size()));
    }
    return calls;
}

// A call's check-only descriptors are asked in the one script call that decides the call,
// not one read each: 16 of them beside a charged one cost Redis one script call.
TEST(GrpcCheckOnly, ManyCheckOnlyDescriptorsCostOneScriptCall) {
    RedisServer redis;
    Sidecar s(redis.url());
    ASSERT_EQ(s.call(rls_request("llm", {one("calls", "warm")})).overall_code(), RlsResponse::OK);
    std::vector<Descriptor> many{one("calls", "c")};
    for (int i = 0; i < 16; ++i) many.push_back(one("tokens", "t" + std::to_string(i), 0));
    const long long before = script_calls(redis);
    const auto res = s.call(rls_request("llm", many));
    EXPECT_EQ(script_calls(redis) - before, 1) << "one script call for the whole call";
    EXPECT_EQ(res.overall_code(), RlsResponse::OK);
    ASSERT_EQ(res.statuses_size(), 17);
    EXPECT_EQ(res.statuses(0).limit_remaining(), 99u);
    for (int i = 1; i < 17; ++i) EXPECT_EQ(res.statuses(i).limit_remaining(), 5u) << i;
    // Check-only alone, all of them: one script call too, and nothing charged.
    many.erase(many.begin());
    const long long again = script_calls(redis);
    EXPECT_EQ(s.call(rls_request("llm", many)).overall_code(), RlsResponse::OK);
    EXPECT_EQ(script_calls(redis) - again, 1);
    for (const auto& key : redis.keys()) EXPECT_EQ(key.find("tokens"), std::string::npos) << key << ": nothing charged";
}

// Exact under concurrency: check-only calls never take a unit the charged ones could have.
TEST(GrpcCheckOnly, ChargedCallsAdmitExactlyTheLimitAmongConcurrentCheckOnlyCalls) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        std::vector<std::unique_ptr<Sidecar>> fleet;
        for (int i = 0; i < 3; ++i) fleet.push_back(std::make_unique<Sidecar>(redis.url()));
        std::atomic<int> ok{0}, over{0}, failed{0}, asked_failed{0};
        run_concurrently(48, [&](int i) {
            auto& client = fleet[static_cast<std::size_t>(i % 3)]->client;
            if (i % 2 == 0) {
                const auto code = client.code(rls_request("llm", {one("budget", "shared", 0)}));
                if (code != RlsResponse::OK && code != RlsResponse::OVER_LIMIT) asked_failed++;
                return;
            }
            const auto code = client.code(rls_request("llm", {one("budget", "shared")}));
            (code == RlsResponse::OK ? ok : code == RlsResponse::OVER_LIMIT ? over : failed)++;
        });
        EXPECT_EQ(ok.load(), 10);
        EXPECT_EQ(over.load(), 14);
        EXPECT_EQ(failed.load(), 0);
        EXPECT_EQ(asked_failed.load(), 0);
        const auto after = fleet[0]->call(rls_request("llm", {one("budget", "shared", 0)}));
        EXPECT_EQ(after.overall_code(), RlsResponse::OVER_LIMIT);
        EXPECT_EQ(after.statuses(0).limit_remaining(), 0u);
    });
}

}  // namespace
}  // namespace ratelimitd::test::grpc_check_only_test
