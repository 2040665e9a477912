// parse_cidr / cidr_contains: trusted_proxies networks.
#include "ratelimitd/policy/cidr.hpp"

#include <gtest/gtest.h>

namespace {

using namespace ratelimitd::policy;

Cidr must_parse(std::string_view text) {
    const auto c = parse_cidr(text);
    EXPECT_TRUE(c.has_value()) << text;
    return c.value_or(Cidr{});
}

TEST(ParseCidr, ReadsIpv4WithPrefix) {
    const Cidr c = must_parse("10.0.0.0/8");
    EXPECT_FALSE(c.v6);
    EXPECT_EQ(c.prefix_len, 8);
    EXPECT_EQ(c.bytes[0], 10);
}

TEST(ParseCidr, BareAddressIsASingleHost) {
    EXPECT_EQ(must_parse("127.0.0.1").prefix_len, 32);
    const Cidr v6 = must_parse("::1");
    EXPECT_TRUE(v6.v6);
    EXPECT_EQ(v6.prefix_len, 128);
    EXPECT_EQ(v6.bytes[15], 1);
}

TEST(ParseCidr, ClearsHostBits) {
    const Cidr c = must_parse("10.1.2.3/8");
    EXPECT_EQ(c.bytes[0], 10);
    EXPECT_EQ(c.bytes[1], 0);
    EXPECT_EQ(c.bytes[3], 0);
    const Cidr d = must_parse("192.168.1.255/25");
    EXPECT_EQ(d.bytes[3], 128);
    EXPECT_EQ(must_parse("fd12:3456::1/16").bytes[2], 0);
}

TEST(ParseCidr, AcceptsPrefixZero) {
    EXPECT_EQ(must_parse("0.0.0.0/0").prefix_len, 0);
    EXPECT_EQ(must_parse("::/0").prefix_len, 0);
}

TEST(ParseCidr, RejectsEverythingElse) {
    for (const char* bad :
         {"", "/8", "localhost", "10.0.0", "10.0.0.0/33", "::1/129", "10.0.0.0/", "10.0.0.0/-1",
          "10.0.0.0/+8", "10.0.0.0/8/8", "10.0.0.0/1000", " 10.0.0.1", "[::1]", "[::1]/128",
          "fe80::1%eth0", "10.0.0.256", "1.2.3.4:80", "10.0.0.0/8 "}) {
        EXPECT_FALSE(parse_cidr(bad).has_value()) << '"' << bad << '"';
    }
    EXPECT_FALSE(parse_cidr(std::string(200, '1')).has_value());
}

TEST(CidrContains, MatchesIpv4Networks) {
    const Cidr net = must_parse("10.0.0.0/8");
    EXPECT_TRUE(cidr_contains(net, "10.0.0.1"));
    EXPECT_TRUE(cidr_contains(net, "10.255.255.255"));
    EXPECT_FALSE(cidr_contains(net, "11.0.0.1"));
    EXPECT_FALSE(cidr_contains(net, "9.255.255.255"));

    const Cidr odd = must_parse("192.168.1.128/25");
    EXPECT_TRUE(cidr_contains(odd, "192.168.1.200"));
    EXPECT_FALSE(cidr_contains(odd, "192.168.1.127"));
}

TEST(CidrContains, SingleHostMatchesOnlyItself) {
    const Cidr host = must_parse("127.0.0.1");
    EXPECT_TRUE(cidr_contains(host, "127.0.0.1"));
    EXPECT_FALSE(cidr_contains(host, "127.0.0.2"));
}

TEST(CidrContains, MatchesIpv6Networks) {
    const Cidr loop = must_parse("::1/128");
    EXPECT_TRUE(cidr_contains(loop, "::1"));
    EXPECT_TRUE(cidr_contains(loop, "0:0:0:0:0:0:0:1"));
    EXPECT_FALSE(cidr_contains(loop, "::2"));

    const Cidr ula = must_parse("fd00::/8");
    EXPECT_TRUE(cidr_contains(ula, "fd12:3456::1"));
    EXPECT_FALSE(cidr_contains(ula, "fe80::1"));
}

TEST(CidrContains, FamiliesDoNotMix) {
    EXPECT_FALSE(cidr_contains(must_parse("::/0"), "10.0.0.1"));
    EXPECT_FALSE(cidr_contains(must_parse("0.0.0.0/0"), "::1"));
    EXPECT_TRUE(cidr_contains(must_parse("0.0.0.0/0"), "8.8.8.8"));
}

TEST(CidrContains, Ipv4MappedPeerMatchesIpv4Network) {
    // What a dual-stack socket reports for an IPv4 client.
    EXPECT_TRUE(cidr_contains(must_parse("127.0.0.1/32"), "::ffff:127.0.0.1"));
    EXPECT_FALSE(cidr_contains(must_parse("127.0.0.1/32"), "::ffff:127.0.0.2"));
    EXPECT_FALSE(cidr_contains(must_parse("127.0.0.1/32"), "::127.0.0.1"));
}

TEST(ParseCidr, Ipv4MappedNetworksAreTheIpv4NetworksTheyMap) {
    // Peers are canonicalised (::ffff:10.0.0.1 is the IPv4 peer 10.0.0.1); networks are too.
    const Cidr host = must_parse("::ffff:10.0.0.1/128");
    EXPECT_FALSE(host.v6);
    EXPECT_EQ(host.prefix_len, 32);
    EXPECT_EQ(host.bytes, must_parse("10.0.0.1/32").bytes);
    EXPECT_TRUE(cidr_contains(host, "10.0.0.1"));
    EXPECT_TRUE(cidr_contains(host, "::ffff:10.0.0.1"));
    EXPECT_FALSE(cidr_contains(host, "10.0.0.2"));
    EXPECT_TRUE(cidr_contains(must_parse("::ffff:10.0.0.1"), "10.0.0.1"));  // bare: /128
    const Cidr net = must_parse("::FFFF:10.1.2.3/112");
    EXPECT_FALSE(net.v6);
    EXPECT_EQ(net.prefix_len, 16);
    EXPECT_TRUE(cidr_contains(net, "10.1.200.1"));
    EXPECT_FALSE(cidr_contains(net, "10.2.0.1"));
    EXPECT_TRUE(cidr_contains(must_parse("::ffff:0:0/96"), "192.0.2.1"));  // every IPv4 address
    // Shorter than /96 it also holds non-mapped IPv6 addresses: it stays an IPv6 network.
    EXPECT_TRUE(must_parse("::ffff:0:0/95").v6);
    EXPECT_FALSE(cidr_contains(must_parse("::/0"), "10.0.0.1"));
}

TEST(CidrContains, UnparsableAddressIsInNoNetwork) {
    const Cidr all = must_parse("0.0.0.0/0");
    for (const char* bad : {"", "localhost", "10.0.0.1:80", "10.0.0.1/32", " 10.0.0.1", "[::1]"}) {
        EXPECT_FALSE(cidr_contains(all, bad)) << bad;
    }
}

}  // namespace
