// Issue 45 item 1: what a proxy's client shapes is decided, never an error (which Envoy would
// admit). A 5000-byte value (a header a request_headers action maps) is counted on its own
// key and the call's other descriptors are charged as usual; a limit override above 1e9 per
// unit, up to UINT32_MAX, is a limit as envoyproxy/ratelimit takes it. The real binary, a real
// redis-server, a gRPC client from Envoy's protos.
#include "support/concurrent_calls.hpp"
#include "support/held_window.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ratelimitd::test::grpc_client_shaped_test {
namespace {

using namespace std::chrono_literals;

const char* const config = R"(domains:
  - domain: edge
    descriptors:
      - key: tenant
        rate_limit: {unit: hour, requests_per_unit: 3}
      - key: user
        rate_limit: {unit: hour, requests_per_unit: 100}
)";

Descriptor one(const std::string& key, const std::string& value) { return Descriptor{{{key, value}}, {}}; }

/// A descriptor that sends its own limit of `count` per minute.
RlsRequest with_override(const std::string& value, std::uint32_t count) {
    auto req = rls_request("edge", {one("tenant", "X"), one("tenant", value)});
    auto* limit = req.mutable_descriptors(1)->mutable_limit();
    limit->set_requests_per_unit(count);
    limit->set_unit(RlsResponse::RateLimit::MINUTE);  // the same number in both enums
    return req;
}

struct Sidecar {
    explicit Sidecar(const std::string& redis_url, std::vector<std::string> extra = {})
        : server(config, redis_url, with(std::move(extra))),
          client(grpc_port_from_log(server.process().wait_for_log("grpc listening on", process_start_bound))) {}
    static std::vector<std::string> with(std::vector<std::string> extra) {
        extra.insert(extra.begin(), {"--grpc-listen", "127.0.0.1:0", "--store-timeout", "2s"});
        return extra;
    }
    RlsResponse call(const RlsRequest& req) {
        RlsResponse res;
        const auto status = client.call(req, res);
        EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
        return res;
    }
    Ratelimitd server;
    RlsClient client;
};

TEST(GrpcClientShaped, ALongValueIsDecidedAndTheOtherDescriptorsAreCharged) {
    RedisServer redis;
    Sidecar s(redis.url());
    const std::string long_value(5000, 'v');
    const auto first = s.call(rls_request("edge", {one("tenant", long_value), one("user", "u")}));
    EXPECT_EQ(first.overall_code(), RlsResponse::OK);
    ASSERT_EQ(first.statuses_size(), 2);
    EXPECT_EQ(first.statuses(0).limit_remaining(), 2u);
    EXPECT_EQ(first.statuses(1).limit_remaining(), 99u) << "the normal descriptor is charged";
    // Its own counter: the same first 4096 bytes, or those bytes alone, count apart.
    const auto other_tail = s.call(rls_request("edge", {one("tenant", long_value + "w")}));
    EXPECT_EQ(other_tail.statuses(0).limit_remaining(), 2u);
    const auto prefix_only = s.call(rls_request("edge", {one("tenant", long_value.substr(0, 4096))}));
    EXPECT_EQ(prefix_only.statuses(0).limit_remaining(), 2u);
    for (const auto& key : redis.keys()) EXPECT_LT(key.size(), 256u) << "keys stay short";
}

// Envoy's largest header by default (60 KiB) mapped into two descriptors: a 120 KiB call, which
// gRPC took for too large (RESOURCE_EXHAUSTED, an error Envoy admits) under a 64 KiB cap.
TEST(GrpcClientShaped, ASixtyKibHeaderInTwoDescriptorsIsDecided) {
    RedisServer redis;
    Sidecar s(redis.url());
    const std::string header(60 * 1024, 'h');
    const auto res = s.call(rls_request("edge", {one("tenant", header), one("user", header)}));
    EXPECT_EQ(res.overall_code(), RlsResponse::OK);
    ASSERT_EQ(res.statuses_size(), 2);
    EXPECT_EQ(res.statuses(0).limit_remaining(), 2u);
    EXPECT_EQ(res.statuses(1).limit_remaining(), 99u);
}

// envoyproxy/ratelimit's keys: a descriptor of 40 long entries is one short key, a long value
// alone a key of its bounded form; both decided and charged.
TEST(GrpcClientShaped, ErlKeysStayBoundedForLongValuesAndManyEntries) {
    RedisServer redis;
    Sidecar s(redis.url(), {"--envoy-key-layout", "envoyproxy-ratelimit"});
    Descriptor many;
    for (int i = 0; i < 40; ++i) many.entries.push_back({"tenant", std::string(5000, 'm')});
    auto req = rls_request("edge", {one("tenant", std::string(5000, 'v')), many, one("user", "u")});
    auto* limit = req.mutable_descriptors(1)->mutable_limit();
    limit->set_requests_per_unit(7);
    limit->set_unit(RlsResponse::RateLimit::HOUR);
    const auto res = s.call(req);
    EXPECT_EQ(res.overall_code(), RlsResponse::OK);
    ASSERT_EQ(res.statuses_size(), 3);
    EXPECT_EQ(res.statuses(0).limit_remaining(), 2u);
    EXPECT_EQ(res.statuses(1).limit_remaining(), 6u);
    EXPECT_EQ(res.statuses(2).limit_remaining(), 99u);
    const auto keys = redis.keys();
    EXPECT_EQ(keys.size(), 3u);
    for (const auto& key : keys) EXPECT_LT(key.size(), 6200u);
}

TEST(GrpcClientShaped, ConcurrentCallsWithALongValueAdmitExactlyTheLimit) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar s(redis.url());
        const std::string long_value(5000, 'z');
        std::atomic<int> ok{0}, over{0}, failed{0};
        run_concurrently(12, [&](int) {
            RlsResponse res;
            if (!s.client.call(rls_request("edge", {one("tenant", long_value), one("user", "u")}), res).ok()) {
                ++failed;
                return;
            }
            (res.overall_code() == RlsResponse::OK ? ok : over)++;
        });
        EXPECT_EQ(failed.load(), 0);
        EXPECT_EQ(ok.load(), 3);
        EXPECT_EQ(over.load(), 9);
    });
}

TEST(GrpcClientShaped, AnOverrideAboveABillionUpToUint32MaxIsALimitAndCharged) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar s(redis.url());
        for (int i = 1; i <= 3; ++i) {
            const auto res = s.call(with_override("o", 2'000'000'000u));
            EXPECT_EQ(res.overall_code(), RlsResponse::OK);
            ASSERT_EQ(res.statuses_size(), 2);
            EXPECT_EQ(res.statuses(0).limit_remaining(), static_cast<std::uint32_t>(3 - i)) << "X charged";
            EXPECT_EQ(res.statuses(1).current_limit().requests_per_unit(), 2'000'000'000u);
            EXPECT_EQ(res.statuses(1).limit_remaining(), 2'000'000'000u - static_cast<std::uint32_t>(i));
        }
        const std::uint32_t most = std::numeric_limits<std::uint32_t>::max();
        RlsResponse res;
        ASSERT_TRUE(s.client.call(with_override("m", most), res).ok());
        EXPECT_EQ(res.overall_code(), RlsResponse::OVER_LIMIT) << "X's 3 are spent";
        EXPECT_EQ(res.statuses(1).current_limit().requests_per_unit(), most);
    });
}

}  // namespace
}  // namespace ratelimitd::test::grpc_client_shaped_test
