// The RLS door's rows of the door table (policy::rls_refusals): one call per row, refused by
// the codec or the planner as INVALID_ARGUMENT; and everything a proxy's client shapes (value
// length, entry count, hits_addend, a limit override up to UINT32_MAX) planned, never refused.
#include "ratelimitd/grpc/request_codec.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/policy/rls_refusals.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>

namespace ratelimitd::rls {
namespace {

using envoy::service::ratelimit::v3::RateLimitRequest;

const char* const rules = R"(
domains:
  - domain: edge
    descriptors:
      - {key: tenant, rate_limit: {unit: minute, requests_per_unit: 10}}
)";

/// A well-formed call: domain edge, one descriptor tenant=a.
RateLimitRequest good_call() {
    RateLimitRequest r;
    r.set_domain("edge");
    auto* e = r.add_descriptors()->add_entries();
    e->set_key("tenant");
    e->set_value("a");
    return r;
}

/// One call per row of the door table, made malformed the way that row names.
const std::map<std::string_view, std::function<void(RateLimitRequest&)>>& row_calls() {
    static const std::map<std::string_view, std::function<void(RateLimitRequest&)>> calls{
        {"an empty domain", [](RateLimitRequest& r) { r.set_domain(""); }},
        {"a domain over 1024 bytes", [](RateLimitRequest& r) { r.set_domain(std::string(1025, 'd')); }},
        {"no descriptors", [](RateLimitRequest& r) { r.clear_descriptors(); }},
        {"more than 64 descriptors",
         [](RateLimitRequest& r) {
             for (int i = 0; i < 64; ++i) *r.add_descriptors() = r.descriptors(0);
         }},
        {"a descriptor without entries", [](RateLimitRequest& r) { r.add_descriptors(); }},
        {"an empty entry key", [](RateLimitRequest& r) { r.mutable_descriptors(0)->mutable_entries(0)->set_key(""); }},
        {"an entry key over 1024 bytes",
         [](RateLimitRequest& r) { r.mutable_descriptors(0)->mutable_entries(0)->set_key(std::string(1025, 'k')); }},
        {"a `limit` override whose unit is not 1..7",
         [](RateLimitRequest& r) {
             auto* limit = r.mutable_descriptors(0)->mutable_limit();
             limit->set_requests_per_unit(5);
             limit->set_unit(8);
         }},
    };
    return calls;
}

class RlsRefusals : public ::testing::Test {
protected:
    std::shared_ptr<const policy::Registry> reg =
        std::make_shared<const policy::Registry>(policy::parse_config(rules, "r.yaml").registry);

    /// The code the door answers with, as the codec and then the planner decide.
    result<policy::RlsPlan> decide(const RateLimitRequest& msg) const {
        auto decoded = decode_request(msg);
        if (!decoded) return decoded.error();
        return policy::plan(reg, *decoded);
    }
};

TEST_F(RlsRefusals, EveryRowOfTheDoorTableIsRefusedAsInvalidArgument) {
    ASSERT_TRUE(decide(good_call()));
    for (const auto& row : policy::rls_refusals()) {
        SCOPED_TRACE(row.input);
        const auto call = row_calls().find(row.input);
        ASSERT_NE(call, row_calls().end()) << "a row without its test call";
        auto msg = good_call();
        call->second(msg);
        const auto planned = decide(msg);
        ASSERT_FALSE(planned);
        EXPECT_EQ(planned.error().code, errc::invalid_request);
        EXPECT_NE(row.cause.find("the proxy"), std::string_view::npos) << "only the proxy may cause an error";
    }
    EXPECT_EQ(row_calls().size(), policy::rls_refusals().size()) << "a test call for a row that is gone";
}

TEST_F(RlsRefusals, NothingAClientShapesIsRefused) {
    auto msg = good_call();
    msg.mutable_descriptors(0)->mutable_entries(0)->set_value(std::string(5000, 'v'));
    auto* deep = msg.add_descriptors();
    for (int i = 0; i < 40; ++i) {
        auto* e = deep->add_entries();
        e->set_key("tenant");
        e->set_value(std::string(4097, 'w'));
    }
    auto* huge = msg.add_descriptors();
    *huge->add_entries() = msg.descriptors(0).entries(0);
    huge->mutable_hits_addend()->set_value(std::numeric_limits<std::uint64_t>::max());
    for (const std::uint32_t count : {2'000'000'000u, std::numeric_limits<std::uint32_t>::max()}) {
        auto* over = msg.add_descriptors();
        *over->add_entries() = good_call().descriptors(0).entries(0);
        over->mutable_limit()->set_requests_per_unit(count);
        over->mutable_limit()->set_unit(2);
    }
    msg.set_hits_addend(std::numeric_limits<std::uint32_t>::max());
    const auto planned = decide(msg);
    ASSERT_TRUE(planned) << planned.error().detail;
    EXPECT_EQ(planned->descriptors.size(), 5u);
    EXPECT_TRUE(planned->descriptors[2].never_admitted) << "an impossible cost: OVER_LIMIT, not an error";
    EXPECT_EQ(planned->descriptors[3].requests_per_unit, 2'000'000'000u);
    EXPECT_EQ(planned->descriptors[4].requests_per_unit, std::numeric_limits<std::uint32_t>::max());
}

}  // namespace
}  // namespace ratelimitd::rls
