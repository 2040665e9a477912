// grpc_tls_client_san's comparison: DNS names as envoyproxy/ratelimit compares them (case,
// a trailing dot, a wildcard for one leftmost label), IP addresses as addresses, URIs exactly.
#include "ratelimitd/grpc/client_san_verifier.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::rls {
namespace {

TEST(ClientSan, DnsNamesIgnoreCaseAndOneTrailingDot) {
    const SubjectAltNames names{.dns = {"Envoy.Test", "other.test"}};
    EXPECT_TRUE(carries_san(names, "envoy.test"));
    EXPECT_TRUE(carries_san(names, "ENVOY.TEST."));
    EXPECT_TRUE(carries_san(names, "other.test"));
    EXPECT_FALSE(carries_san(names, "envoy.tes"));
    EXPECT_FALSE(carries_san(names, "a.envoy.test"));
    EXPECT_FALSE(carries_san(names, ""));
}

TEST(ClientSan, AWildcardStandsForExactlyOneLeftmostLabel) {
    const SubjectAltNames names{.dns = {"*.envoy.test"}};
    EXPECT_TRUE(carries_san(names, "a.envoy.test"));
    EXPECT_FALSE(carries_san(names, "envoy.test"));
    EXPECT_FALSE(carries_san(names, "a.b.envoy.test"));
    EXPECT_FALSE(carries_san(names, ".envoy.test"));
    EXPECT_FALSE(carries_san(SubjectAltNames{.dns = {"a*.envoy.test"}}, "ab.envoy.test")) << "only a whole label";
}

TEST(ClientSan, IpAddressesCompareAsAddressesWithTheIpSansOnly) {
    const SubjectAltNames names{.dns = {"10.0.0.1"}, .ips = {"::1", "192.0.2.7"}};
    EXPECT_TRUE(carries_san(names, "0:0::1"));
    EXPECT_TRUE(carries_san(names, "192.0.2.7"));
    EXPECT_FALSE(carries_san(names, "10.0.0.1")) << "an address is not matched against DNS names";
    EXPECT_FALSE(carries_san(SubjectAltNames{.ips = {"::ffff:192.0.2.7"}}, "192.0.2.7"));
}

TEST(ClientSan, UrisCompareByteForByte) {
    const SubjectAltNames names{.dns = {"spiffe"}, .uris = {"spiffe://td/ns/edge/sa/envoy"}};
    EXPECT_TRUE(carries_san(names, "spiffe://td/ns/edge/sa/envoy"));
    EXPECT_FALSE(carries_san(names, "SPIFFE://td/ns/edge/sa/envoy"));
    EXPECT_FALSE(carries_san(names, "spiffe://td/ns/edge/sa/envoy2"));
}

}  // namespace
}  // namespace ratelimitd::rls
