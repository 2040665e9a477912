// Issue 31 (Medium 5): a cost a limit can never admit (hits_addend 2^64-1, or 64 copies of one
// descriptor on a limit of 3) answers OVER_LIMIT, as envoyproxy/ratelimit does, and charges
// nothing; an error would be let through uncounted by Envoy's failure_mode_deny: false.
// INVALID_ARGUMENT stays for malformed calls. The real binary against a real redis-server.
#include "support/concurrent_calls.hpp"
#include "support/held_window.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>

namespace ratelimitd::test::grpc_impossible_cost_test {
namespace {

using namespace std::chrono_literals;

const char* const config = R"(domains:
  - domain: edge
    descriptors:
      - key: three
        rate_limit: {unit: hour, requests_per_unit: 3}
      - key: bucket
        algorithm: token_bucket
        rate_limit: {unit: hour, requests_per_unit: 3}
      - key: open
        rate_limit: {unlimited: true}
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

TEST(GrpcImpossibleCost, HugeHitsAddendIsOverLimitAndChargesNothing) {
    RedisServer redis;
    Sidecar s(redis.url());
    for (const auto& req : {rls_request("edge", {one("three", "a", UINT64_MAX)}),
                            rls_request("edge", {one("three", "a")}, UINT32_MAX),
                            rls_request("edge", {one("bucket", "a", 4)})}) {
        const auto res = s.call(req);
        EXPECT_EQ(res.overall_code(), RlsResponse::OVER_LIMIT);
        ASSERT_EQ(res.statuses_size(), 1);
        EXPECT_EQ(res.statuses(0).code(), RlsResponse::OVER_LIMIT);
        EXPECT_EQ(res.statuses(0).current_limit().requests_per_unit(), 3u);
        EXPECT_EQ(res.statuses(0).limit_remaining(), 0u);
        EXPECT_GT(res.statuses(0).duration_until_reset().seconds(), 0);
    }
    EXPECT_TRUE(redis.keys().empty()) << "nothing charged";
    EXPECT_EQ(s.call(rls_request("edge", {one("three", "a")})).statuses(0).limit_remaining(), 2u);
    EXPECT_EQ(s.call(rls_request("edge", {one("bucket", "a")})).statuses(0).limit_remaining(), 2u);
}

TEST(GrpcImpossibleCost, SixtyFourCopiesOfOneDescriptorOnALimitOfThreeAreOverLimit) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar s(redis.url());
        const auto res = s.call(rls_request("edge", std::vector<Descriptor>(64, one("three", "b"))));
        EXPECT_EQ(res.overall_code(), RlsResponse::OVER_LIMIT);
        ASSERT_EQ(res.statuses_size(), 64);
        for (const auto& st : res.statuses()) EXPECT_EQ(st.code(), RlsResponse::OVER_LIMIT);
        EXPECT_TRUE(redis.keys().empty());
        // Three copies fit exactly.
        EXPECT_EQ(s.call(rls_request("edge", std::vector<Descriptor>(3, one("three", "b")))).overall_code(),
                  RlsResponse::OK);
        EXPECT_EQ(s.call(rls_request("edge", {one("three", "b")})).overall_code(), RlsResponse::OVER_LIMIT);
    });
}

TEST(GrpcImpossibleCost, OtherDescriptorsOfTheCallAreNotChargedEither) {
    RedisServer redis;
    Sidecar s(redis.url());
    const auto res = s.call(rls_request("edge", {one("open", "x"), one("three", "c"), one("three", "d", UINT64_MAX)}));
    EXPECT_EQ(res.overall_code(), RlsResponse::OVER_LIMIT);
    ASSERT_EQ(res.statuses_size(), 3);
    EXPECT_EQ(res.statuses(0).code(), RlsResponse::OK);
    EXPECT_EQ(res.statuses(1).code(), RlsResponse::OK);
    EXPECT_EQ(res.statuses(1).current_limit().requests_per_unit(), 3u);
    EXPECT_EQ(res.statuses(2).code(), RlsResponse::OVER_LIMIT);
    EXPECT_TRUE(redis.keys().empty());
    // A huge request-level hits_addend on descriptors no rule limits is no denial at all.
    EXPECT_EQ(s.call(rls_request("edge", {one("open", "x")}, UINT32_MAX)).overall_code(), RlsResponse::OK);
}

TEST(GrpcImpossibleCost, ExactUnderConcurrencyWithImpossibleCallsMixedIn) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar s(redis.url());
        std::atomic<int> ok{0}, over{0}, failed{0}, impossible_over{0};
        run_concurrently(48, [&](int i) {
            const bool impossible = i % 2 == 1;
            const auto req = impossible ? rls_request("edge", {one("three", "shared", UINT64_MAX)})
                                        : rls_request("edge", {one("three", "shared")});
            RlsResponse res;
            if (!s.client.call(req, res).ok()) {
                ++failed;
                return;
            }
            if (impossible) {
                impossible_over += res.overall_code() == RlsResponse::OVER_LIMIT;
                return;
            }
            (res.overall_code() == RlsResponse::OK ? ok : over)++;
        });
        EXPECT_EQ(failed.load(), 0);
        EXPECT_EQ(impossible_over.load(), 24);
        EXPECT_EQ(ok.load(), 3);
        EXPECT_EQ(over.load(), 21);
        const auto keys = redis.keys();
        ASSERT_EQ(keys.size(), 1u);
        EXPECT_EQ(redis.command({"GET", keys.front()}), "3") << "only the admitted calls were counted";
    });
}

TEST(GrpcImpossibleCost, MalformedCallsStillAnswerInvalidArgument) {
    RedisServer redis;
    Sidecar s(redis.url());
    RlsResponse res;
    EXPECT_EQ(s.client.call(rls_request("edge", {}), res).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.client.call(rls_request("edge", {Descriptor{{{"", "v"}}, {}}}), res).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace ratelimitd::test::grpc_impossible_cost_test
