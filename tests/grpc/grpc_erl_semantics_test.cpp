// envoyproxy/ratelimit's config semantics on the wire (issue 35 items 5 and 6): an unlimited
// descriptor answers limit_remaining UINT32_MAX; middle and multiple wildcards match, each
// value counting on its own. The real binary, a real redis-server, a client from proto/.
#include "support/concurrent_calls.hpp"
#include "support/held_window.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace ratelimitd::test::grpc_erl_semantics_test {
namespace {

using namespace std::chrono_literals;

// Hours where counts are asserted: the windows are aligned to the unit.
const char* const config = R"(domains:
  - domain: erl
    descriptors:
      - key: open
        rate_limit: {unlimited: true}
      - key: mid
        value: bar*b
        rate_limit: {unit: hour, requests_per_unit: 2, name: mid}
      - key: multi
        value: foo*bar*baz
        rate_limit: {unit: hour, requests_per_unit: 3, name: multi}
      - key: multi
        value: foo1bar1baz
        rate_limit: {unit: hour, requests_per_unit: 7, name: exact}
      - key: multi
        rate_limit: {unit: hour, requests_per_unit: 9, name: default}
      - key: weekly
        rate_limit: {unit: week, requests_per_unit: 2}
)";

Descriptor one(const std::string& key, const std::string& value, std::optional<std::uint64_t> hits = {}) {
    return Descriptor{{{key, value}}, hits};
}

/// One descriptor that sends its own limit (RateLimitDescriptor.limit, as Envoy's rate limit
/// action's `limit` override does).
RlsRequest with_limit(const std::string& key, const std::string& value, std::uint32_t per_unit,
                      RlsResponse::RateLimit::Unit unit) {
    RlsRequest req = rls_request("erl", {one(key, value)});
    auto* limit = req.mutable_descriptors(0)->mutable_limit();
    limit->set_requests_per_unit(per_unit);
    limit->set_unit(static_cast<std::uint32_t>(unit));
    return req;
}

struct Sidecar {
    explicit Sidecar(const std::string& redis_url, const std::vector<std::string>& extra = {})
        : server(config, redis_url, with_grpc(extra)),
          client(grpc_port_from_log(server.process().wait_for_log("grpc listening on", process_start_bound))) {}
    static std::vector<std::string> with_grpc(std::vector<std::string> extra) {
        for (const char* a : {"--grpc-listen", "127.0.0.1:0", "--store-timeout", "2s"}) extra.emplace_back(a);
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

TEST(GrpcErlSemantics, UnlimitedAnswersUint32MaxRemainingAndCountsNothing) {
    RedisServer redis;
    Sidecar s(redis.url());
    const auto res = s.call(rls_request("erl", {one("open", "x"), one("nobody", "y")}));
    EXPECT_EQ(res.overall_code(), RlsResponse::OK);
    ASSERT_EQ(res.statuses_size(), 2);
    EXPECT_EQ(res.statuses(0).code(), RlsResponse::OK);
    EXPECT_FALSE(res.statuses(0).has_current_limit());
    EXPECT_EQ(res.statuses(0).limit_remaining(), std::numeric_limits<std::uint32_t>::max());
    EXPECT_EQ(res.statuses(1).limit_remaining(), 0u) << "no rule: nothing reported";
    EXPECT_TRUE(redis.keys().empty());
}

TEST(GrpcErlSemantics, MiddleAndMultipleWildcardsMatchAndEachValueCountsOnItsOwn) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        Sidecar s(redis.url());
        for (const char* v : {"barab", "barb"}) {
            const auto res = s.call(rls_request("erl", {one("mid", v)}));
            EXPECT_EQ(res.statuses(0).current_limit().name(), "mid") << v;
            EXPECT_EQ(res.statuses(0).limit_remaining(), 1u) << v << ": its own counter";
        }
        EXPECT_EQ(s.call(rls_request("erl", {one("mid", "barab")})).statuses(0).limit_remaining(), 0u);
        EXPECT_EQ(s.client.code(rls_request("erl", {one("mid", "barab")})), RlsResponse::OVER_LIMIT);
        EXPECT_FALSE(s.call(rls_request("erl", {one("mid", "xbarb")})).statuses(0).has_current_limit());
        // Precedence as envoyproxy/ratelimit: the exact value, then the wildcard, then the key alone.
        EXPECT_EQ(s.call(rls_request("erl", {one("multi", "foo1bar1baz")})).statuses(0).current_limit().name(), "exact");
        EXPECT_EQ(s.call(rls_request("erl", {one("multi", "foo123bar456baz")})).statuses(0).current_limit().name(), "multi");
        EXPECT_EQ(s.call(rls_request("erl", {one("multi", "foo123baz")})).statuses(0).current_limit().name(), "default");
    });
}

TEST(GrpcErlSemantics, AWeekIsReportedAsWeekAndCountsItsLimit) {
    in_one_window(7 * 24h, [&](int) {
        RedisServer redis;
        Sidecar s(redis.url());
        const auto first = s.call(rls_request("erl", {one("weekly", "w")}));
        ASSERT_EQ(first.statuses_size(), 1);
        EXPECT_EQ(first.statuses(0).current_limit().unit(), RlsResponse::RateLimit::WEEK);
        EXPECT_EQ(static_cast<int>(first.statuses(0).current_limit().unit()), 7);
        EXPECT_EQ(first.statuses(0).limit_remaining(), 1u);
        EXPECT_GT(first.statuses(0).duration_until_reset().seconds(), 0);
        EXPECT_LE(first.statuses(0).duration_until_reset().seconds(), 7 * 86400);
        EXPECT_EQ(s.client.code(rls_request("erl", {one("weekly", "w")})), RlsResponse::OK);
        EXPECT_EQ(s.client.code(rls_request("erl", {one("weekly", "w")})), RlsResponse::OVER_LIMIT);
    });
}

// envoyproxy/ratelimit's GetLimit: the limit a descriptor sends decides it, for a descriptor no
// rule names and for an unlimited one alike; another limit sent later counts on the same counter.
TEST(GrpcErlSemantics, ADescriptorsOwnLimitDecidesItExactlyUnderConcurrentCalls) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        std::vector<std::unique_ptr<Sidecar>> fleet;
        for (int i = 0; i < 3; ++i) fleet.push_back(std::make_unique<Sidecar>(redis.url()));
        const CodeCounts counts = count_codes(30, [&](int i) {
            return fleet[static_cast<std::size_t>(i % 3)]->client.code(
                with_limit("user", "u1", 4, RlsResponse::RateLimit::HOUR));
        });
        EXPECT_EQ(counts.ok, 4);
        EXPECT_EQ(counts.over, 26);
        EXPECT_EQ(counts.failed, 0);
        auto& s = *fleet[0];
        const auto more = s.call(with_limit("user", "u1", 6, RlsResponse::RateLimit::HOUR));
        EXPECT_EQ(more.overall_code(), RlsResponse::OK);
        EXPECT_EQ(more.statuses(0).current_limit().requests_per_unit(), 6u);
        EXPECT_EQ(more.statuses(0).current_limit().unit(), RlsResponse::RateLimit::HOUR);
        EXPECT_EQ(more.statuses(0).limit_remaining(), 1u) << "the same counter: 4 + 1 of 6";
        const auto open = s.call(with_limit("open", "x", 1, RlsResponse::RateLimit::HOUR));
        EXPECT_EQ(open.statuses(0).limit_remaining(), 0u) << "an unlimited rule is overridden too";
        EXPECT_EQ(s.client.code(with_limit("open", "x", 1, RlsResponse::RateLimit::HOUR)), RlsResponse::OVER_LIMIT);
        RlsResponse refused;
        auto bad = with_limit("user", "u2", 1, RlsResponse::RateLimit::HOUR);
        bad.mutable_descriptors(0)->mutable_limit()->set_unit(9);
        const auto status = s.client.call(bad, refused);
        EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        EXPECT_NE(status.error_message().find("descriptors[0].limit.unit"), std::string::npos) << status.error_message();
    });
}

TEST(GrpcErlSemantics, AWildcardLimitAdmitsExactlyItsLimitUnderConcurrentCalls) {
    in_one_window(1h, [&](int) {
        RedisServer redis;
        std::vector<std::unique_ptr<Sidecar>> fleet;
        for (int i = 0; i < 3; ++i) fleet.push_back(std::make_unique<Sidecar>(redis.url()));
        const CodeCounts counts = count_codes(30, [&](int i) {
            return fleet[static_cast<std::size_t>(i % 3)]->client.code(rls_request("erl", {one("multi", "fooXbarYbaz")}));
        });
        EXPECT_EQ(counts.ok, 3);
        EXPECT_EQ(counts.over, 27);
        EXPECT_EQ(counts.failed, 0);
    });
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_semantics_test
