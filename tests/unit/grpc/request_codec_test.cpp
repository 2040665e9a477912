// decode_request: what reaches the planner, and every refusal naming its field.
#include "ratelimitd/grpc/request_codec.hpp"
#include "ratelimitd/policy/rls_value.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::rls {
namespace {

using envoy::service::ratelimit::v3::RateLimitRequest;

RateLimitRequest request(const std::string& domain, int descriptors, int entries) {
    RateLimitRequest r;
    r.set_domain(domain);
    for (int i = 0; i < descriptors; ++i) {
        auto* d = r.add_descriptors();
        for (int j = 0; j < entries; ++j) {
            auto* e = d->add_entries();
            e->set_key("k" + std::to_string(j));
            e->set_value("v" + std::to_string(i));
        }
    }
    return r;
}

TEST(RequestCodec, CarriesDomainEntriesAndBothHitsAddends) {
    auto msg = request("edge", 2, 2);
    msg.set_hits_addend(3);
    msg.mutable_descriptors(1)->mutable_hits_addend()->set_value(7);
    const auto r = decode_request(msg);
    ASSERT_TRUE(r) << r.error().detail;
    EXPECT_EQ(r->domain, "edge");
    EXPECT_EQ(r->hits_addend, 3u);
    ASSERT_EQ(r->descriptors.size(), 2u);
    EXPECT_EQ(r->descriptors[0].entries[1].key, "k1");
    EXPECT_EQ(r->descriptors[1].entries[0].value, "v1");
    EXPECT_FALSE(r->descriptors[0].hits_addend);  // unset: the request's
    EXPECT_EQ(r->descriptors[1].hits_addend, 7u);
}

TEST(RequestCodec, CarriesADescriptorsLimitOverrideOnlyWhenSet) {
    auto msg = request("edge", 2, 1);
    auto* limit = msg.mutable_descriptors(1)->mutable_limit();
    limit->set_requests_per_unit(42);
    limit->set_unit(7);
    const auto r = decode_request(msg);
    ASSERT_TRUE(r) << r.error().detail;
    EXPECT_FALSE(r->descriptors[0].limit);
    ASSERT_TRUE(r->descriptors[1].limit);
    EXPECT_EQ(r->descriptors[1].limit->requests_per_unit, 42u);
    EXPECT_EQ(r->descriptors[1].limit->unit, 7u);
}

TEST(RequestCodec, ExplicitZeroDescriptorHitsAddendIsKeptApartFromUnset) {
    auto msg = request("edge", 1, 1);
    msg.mutable_descriptors(0)->mutable_hits_addend()->set_value(0);
    const auto r = decode_request(msg);
    ASSERT_TRUE(r);
    ASSERT_TRUE(r->descriptors[0].hits_addend);
    EXPECT_EQ(*r->descriptors[0].hits_addend, 0u);
}

void expect_refused(const RateLimitRequest& msg, const std::string& names) {
    const auto r = decode_request(msg);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, errc::invalid_request);
    EXPECT_NE(r.error().detail.find(names), std::string::npos) << r.error().detail;
}

TEST(RequestCodec, RefusesEmptyDomainDescriptorsAndEntries) {
    expect_refused(request("", 1, 1), "domain: empty");
    expect_refused(request("edge", 0, 1), "descriptors: empty");
    expect_refused(request("edge", 2, 0), "descriptors[0].entries: empty");
    auto msg = request("edge", 1, 2);
    msg.mutable_descriptors(0)->mutable_entries(1)->set_key("");
    expect_refused(msg, "descriptors[0].entries[1].key: empty");
}

TEST(RequestCodec, RefusesWhatIsOverTheLimitsWithoutEchoingIt) {
    const RequestLimits limits;
    expect_refused(request(std::string(limits.max_domain_bytes + 1, 'd'), 1, 1), "domain: longer than 1024");
    expect_refused(request("edge", static_cast<int>(limits.max_descriptors) + 1, 1), "descriptors: more than 64");
    auto msg = request("edge", 2, 1);
    msg.mutable_descriptors(1)->mutable_entries(0)->set_key(std::string(limits.max_key_bytes + 1, 'k'));
    const auto r = decode_request(msg);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().detail.find("descriptors[1].entries[0].key: longer than 1024"), std::string::npos);
    EXPECT_EQ(r.error().detail.find("kkkk"), std::string::npos);
}

TEST(RequestCodec, AcceptsExactlyTheLimits) {
    const RequestLimits limits;
    auto msg = request(std::string(limits.max_domain_bytes, 'd'), static_cast<int>(limits.max_descriptors), 16);
    msg.mutable_descriptors(0)->mutable_entries(0)->set_value(std::string(policy::max_kept_value_bytes, 'x'));
    msg.mutable_descriptors(0)->mutable_entries(0)->set_key(std::string(limits.max_key_bytes, 'k'));
    const auto r = decode_request(msg);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->descriptors[0].entries[0].value, std::string(policy::max_kept_value_bytes, 'x')) << "kept as sent";
}

// What a proxy's client shapes is decoded, never refused: a value of any length (a header a
// request_headers action maps) comes out bounded, and a descriptor may carry any number of
// entries (the message's size bounds them).
TEST(RequestCodec, DecodesWhatAClientShapesWhateverItsSize) {
    auto msg = request("edge", 2, 40);
    const std::string long_value(5000, 'v');
    msg.mutable_descriptors(1)->mutable_entries(0)->set_value(long_value);
    const auto r = decode_request(msg);
    ASSERT_TRUE(r) << r.error().detail;
    EXPECT_EQ(r->descriptors[0].entries.size(), 40u);
    const std::string& bounded = r->descriptors[1].entries[0].value;
    EXPECT_EQ(bounded, policy::bounded_value(long_value));
    EXPECT_EQ(bounded.size(), policy::bounded_value_bytes);
}

}  // namespace
}  // namespace ratelimitd::rls
