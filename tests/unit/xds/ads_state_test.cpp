// The ADS state machine without a network: the first request of each stream, ACK (the
// response's version and nonce), NACK (the previous version, the response's nonce, the reason),
// the node once per stream, the version kept across streams.
#include "ratelimitd/xds/ads_state.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::xds {
namespace {

envoy::config::core::v3::Node node(const std::string& id) {
    envoy::config::core::v3::Node n;
    n.set_id(id);
    return n;
}

DiscoveryResponse response(const std::string& version, const std::string& nonce,
                           const std::string& type = rate_limit_config_type_url) {
    DiscoveryResponse r;
    r.set_version_info(version);
    r.set_nonce(nonce);
    r.set_type_url(type);
    return r;
}

TEST(AdsState, TheFirstRequestNamesTheNodeAndTheTypeWithoutVersionOrNonce) {
    AdsState state(node("rl-1"));
    const auto first = state.open_stream();
    EXPECT_EQ(first.node().id(), "rl-1");
    EXPECT_EQ(first.type_url(), "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig");
    EXPECT_EQ(first.version_info(), "");
    EXPECT_EQ(first.response_nonce(), "");
    EXPECT_EQ(first.resource_names_size(), 0) << "every resource of the type";
    EXPECT_FALSE(first.has_error_detail());
}

TEST(AdsState, AnAckCarriesTheResponsesVersionAndNonceAndNoNode) {
    AdsState state(node("rl-1"));
    (void)state.open_stream();
    const auto ack = state.accept(response("v1", "n1"));
    EXPECT_EQ(ack.version_info(), "v1");
    EXPECT_EQ(ack.response_nonce(), "n1");
    EXPECT_FALSE(ack.has_error_detail());
    EXPECT_FALSE(ack.has_node()) << "the node goes once per stream";
    EXPECT_EQ(state.accepted_version(), "v1");
    EXPECT_EQ(state.accepted_count(), 1u);
}

TEST(AdsState, ANackKeepsThePreviousVersionAndCarriesTheNonceAndTheReason) {
    AdsState state(node("rl-1"));
    (void)state.open_stream();
    (void)state.accept(response("v1", "n1"));
    const auto nack = state.reject(response("v2", "n2"), "resources[0]: descriptors[0].key: expected a key");
    EXPECT_EQ(nack.version_info(), "v1");
    EXPECT_EQ(nack.response_nonce(), "n2");
    ASSERT_TRUE(nack.has_error_detail());
    EXPECT_EQ(nack.error_detail().code(), 3) << "INVALID_ARGUMENT";
    EXPECT_EQ(nack.error_detail().message(), "resources[0]: descriptors[0].key: expected a key");
    EXPECT_EQ(state.accepted_version(), "v1");
    EXPECT_EQ(state.rejected_count(), 1u);
    // A NACK before any ACK names no version.
    AdsState fresh(node("rl-2"));
    (void)fresh.open_stream();
    EXPECT_EQ(fresh.reject(response("v1", "n1"), "bad").version_info(), "");
}

TEST(AdsState, ANewStreamSendsTheNodeAgainWithTheVersionInForce) {
    AdsState state(node("rl-1"));
    (void)state.open_stream();
    (void)state.accept(response("v7", "n1"));
    const auto again = state.open_stream();
    EXPECT_EQ(again.node().id(), "rl-1");
    EXPECT_EQ(again.version_info(), "v7");
    EXPECT_EQ(again.response_nonce(), "") << "no response of this stream answered yet";
}

TEST(AdsState, AResponseOfAnotherTypeIsRefusedBeforeItsResourcesAreRead) {
    AdsState state(node("rl-1"));
    EXPECT_EQ(state.precheck(response("v1", "n1")), std::nullopt);
    const auto why = state.precheck(response("v1", "n1", "type.googleapis.com/envoy.config.cluster.v3.Cluster"));
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("type_url: expected"), std::string::npos) << *why;
}

TEST(AdsState, ALongReasonIsCut) {
    AdsState state(node("rl-1"));
    (void)state.open_stream();
    const auto nack = state.reject(response("v1", "n1"), std::string(100'000, 'x'));
    EXPECT_EQ(nack.error_detail().message().size(), max_error_detail_bytes);
}

}  // namespace
}  // namespace ratelimitd::xds
