// Identity sources: hashing, address canonicalisation, X-Real-IP / X-Forwarded-For behind
// trusted proxies only, and the order of sources.
#include "ratelimitd/policy/identity.hpp"

#include "ratelimitd/check/validate.hpp"
#include "ratelimitd/policy/cidr.hpp"

#include <gtest/gtest.h>

#include <map>

namespace {

using namespace ratelimitd::policy;

/// A request's headers (name -> values, case-insensitive names as HTTP has them).
class Headers {
public:
    Headers& add(std::string name, std::string value) {
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        values_[name].push_back(std::move(value));
        return *this;
    }
    IdentityInput input(std::string_view peer) const {
        IdentityInput in;
        in.headers = [this](std::string_view name) {
            std::string lower(name);
            for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            std::vector<std::string_view> out;
            if (auto it = values_.find(lower); it != values_.end()) {
                for (const auto& v : it->second) out.emplace_back(v);
            }
            return out;
        };
        in.peer = peer;
        return in;
    }

private:
    std::map<std::string, std::vector<std::string>> values_;
};

std::vector<Cidr> nets(std::initializer_list<const char*> texts) {
    std::vector<Cidr> out;
    for (const char* t : texts) out.push_back(*parse_cidr(t));
    return out;
}

IdentitySource header_source(std::string header, bool hash, std::string name = {}) {
    IdentitySource s;
    s.kind = IdentitySource::Kind::header;
    s.header = std::move(header);
    s.hash = hash;
    s.name = std::move(name);
    return s;
}

IdentitySource client_ip_source() {
    IdentitySource s;
    s.kind = IdentitySource::Kind::client_ip;
    s.name = client_ip_identity;
    return s;
}

constexpr std::string_view secret = "0123456789abcdef-secret";

//------------------------------------------------------------------------------
// Hashing

TEST(HashIdentity, IsHmacSha256TruncatedTo32HexDigits) {
    // RFC 4231 test case 2: HMAC-SHA-256(key "Jefe", "what do ya want for nothing?").
    EXPECT_EQ(hash_identity("Jefe", "what do ya want for nothing?"), "key:5bdcc146bf60754e6a042426089575c7");
}

TEST(HashIdentity, DependsOnTheSecretAndTheValue) {
    const auto a = hash_identity(secret, "sk_live_alice");
    EXPECT_EQ(a, hash_identity(secret, "sk_live_alice"));
    EXPECT_NE(a, hash_identity(secret, "sk_live_bob"));
    EXPECT_NE(a, hash_identity("another-secret-of-16", "sk_live_alice"));
    EXPECT_EQ(a.size(), 4u + 32u);
    EXPECT_TRUE(ratelimitd::check::validate_tenant(a));
    EXPECT_EQ(a.find("sk_live_alice"), std::string::npos);
}

//------------------------------------------------------------------------------
// Addresses

TEST(CanonicalIp, OneAddressHasOneSpelling) {
    EXPECT_EQ(canonical_ip("203.0.113.7"), "203.0.113.7");
    EXPECT_EQ(canonical_ip(" 203.0.113.7 "), "203.0.113.7");
    EXPECT_EQ(canonical_ip("203.0.113.7:5678"), "203.0.113.7");
    EXPECT_EQ(canonical_ip("2001:DB8:0:0::1"), "2001:db8::1");
    EXPECT_EQ(canonical_ip("[2001:db8::1]:443"), "2001:db8::1");
    EXPECT_EQ(canonical_ip("[2001:db8::1]"), "2001:db8::1");
    EXPECT_EQ(canonical_ip("::ffff:10.0.0.1"), "10.0.0.1");  // dual-stack socket view of IPv4
}

TEST(CanonicalIp, RejectsWhatIsNotAnAddress) {
    for (const char* bad : {"", "unknown", "_hidden", "example.com", "1.2.3", "1.2.3.4.5", "300.1.1.1",
                            "1.2.3.4:", "1.2.3.4:http", "[::1", "[::1]x", "fe80::1%eth0", "1.2.3.4/32"}) {
        EXPECT_EQ(canonical_ip(bad), std::nullopt) << bad;
    }
}

//------------------------------------------------------------------------------
// The client address rule

TEST(ClientIp, UntrustedPeerIsTheClientWhateverItClaims) {
    const auto trusted = nets({"10.0.0.0/8"});
    Headers h;
    h.add("X-Real-IP", "198.51.100.1").add("X-Forwarded-For", "198.51.100.2");
    EXPECT_EQ(client_ip_tenant(trusted, h.input("203.0.113.9")), "ip:203.0.113.9");
    EXPECT_EQ(client_ip_tenant({}, h.input("203.0.113.9")), "ip:203.0.113.9");  // nobody trusted
}

TEST(ClientIp, TrustedPeerIsBelievedForXRealIp) {
    const auto trusted = nets({"127.0.0.1/32"});
    Headers h;
    h.add("X-Real-IP", "198.51.100.1").add("X-Forwarded-For", "198.51.100.2");
    EXPECT_EQ(client_ip_tenant(trusted, h.input("127.0.0.1")), "ip:198.51.100.1");
}

TEST(ClientIp, XForwardedForIsReadFromTheRightUpToTheFirstUntrustedHop) {
    const auto trusted = nets({"10.0.0.0/8", "127.0.0.1"});
    Headers h;
    // The client forged the first two entries; 203.0.113.9 is what our edge proxy (10.1.1.1) saw.
    h.add("X-Forwarded-For", "6.6.6.6, 10.9.9.9, 203.0.113.9, 10.1.1.1");
    EXPECT_EQ(client_ip_tenant(trusted, h.input("127.0.0.1")), "ip:203.0.113.9");
}

TEST(ClientIp, SeveralXForwardedForLinesAreOneList) {
    const auto trusted = nets({"10.0.0.0/8"});
    Headers h;
    h.add("X-Forwarded-For", "6.6.6.6").add("X-Forwarded-For", "203.0.113.9, 10.0.0.2");
    EXPECT_EQ(client_ip_tenant(trusted, h.input("10.0.0.1")), "ip:203.0.113.9");
}

TEST(ClientIp, AllTrustedHopsGiveTheLeftMost) {
    const auto trusted = nets({"10.0.0.0/8"});
    Headers h;
    h.add("X-Forwarded-For", "10.0.0.7, 10.0.0.2");
    EXPECT_EQ(client_ip_tenant(trusted, h.input("10.0.0.1")), "ip:10.0.0.7");
}

TEST(ClientIp, GarbageOnTheWalkFallsBackToThePeer) {
    const auto trusted = nets({"10.0.0.0/8"});
    Headers h;
    h.add("X-Forwarded-For", "203.0.113.9, unknown");
    EXPECT_EQ(client_ip_tenant(trusted, h.input("10.0.0.1")), "ip:10.0.0.1");
}

TEST(ClientIp, MalformedOrRepeatedXRealIpFallsThroughToXForwardedFor) {
    const auto trusted = nets({"10.0.0.0/8"});
    Headers bad;
    bad.add("X-Real-IP", "not-an-ip").add("X-Forwarded-For", "203.0.113.9");
    EXPECT_EQ(client_ip_tenant(trusted, bad.input("10.0.0.1")), "ip:203.0.113.9");
    Headers twice;
    twice.add("X-Real-IP", "198.51.100.1").add("X-Real-IP", "198.51.100.2");
    EXPECT_EQ(client_ip_tenant(trusted, twice.input("10.0.0.1")), "ip:10.0.0.1");
}

TEST(ClientIp, Ipv6AndMappedPeers) {
    const auto trusted = nets({"::1/128", "10.0.0.0/8"});
    Headers h;
    h.add("X-Forwarded-For", "[2001:DB8::7]:1234");
    EXPECT_EQ(client_ip_tenant(trusted, h.input("::1")), "ip:2001:db8::7");
    EXPECT_EQ(client_ip_tenant(trusted, h.input("::ffff:10.0.0.1")), "ip:2001:db8::7");
    EXPECT_EQ(client_ip_tenant(trusted, Headers{}.input("::ffff:192.0.2.1")), "ip:192.0.2.1");
}

//------------------------------------------------------------------------------
// Sources

TEST(IdentifyWith, PlainHeaderMustBeAValidTenant) {
    Registry reg;
    const auto src = header_source("X-Tenant-Id", false);
    EXPECT_EQ(identify_with(src, reg, Headers{}.add("X-Tenant-Id", "tenant_8231").input("1.1.1.1"), secret),
              "tenant_8231");
    for (const char* bad : {"", "has space", "semi;colon", "ip:1.2.3.4", "key:0123"}) {
        EXPECT_EQ(identify_with(src, reg, Headers{}.add("X-Tenant-Id", bad).input("1.1.1.1"), secret), std::nullopt)
            << bad;
    }
    EXPECT_EQ(identify_with(src, reg, Headers{}.input("1.1.1.1"), secret), std::nullopt);
    EXPECT_EQ(identify_with(src, reg, Headers{}.add("X-Tenant-Id", "a").add("X-Tenant-Id", "b").input("1.1.1.1"),
                            secret),
              std::nullopt);
}

TEST(IdentifyWith, HashedHeaderGivesTheHashNeverTheSecret) {
    Registry reg;
    const auto src = header_source("X-Api-Key", true);
    const auto t = identify_with(src, reg, Headers{}.add("X-Api-Key", " sk live/with spaces ").input("1.1.1.1"),
                                 secret);
    EXPECT_EQ(t, hash_identity(secret, "sk live/with spaces"));
}

TEST(IdentifyWith, BearerTokenIsHashedWithoutItsScheme) {
    Registry reg;
    const auto src = header_source("Authorization", true);
    const auto bearer = identify_with(src, reg, Headers{}.add("Authorization", "Bearer tok_123").input(""), secret);
    EXPECT_EQ(bearer, hash_identity(secret, "tok_123"));
    EXPECT_EQ(identify_with(src, reg, Headers{}.add("Authorization", "bearer   tok_123").input(""), secret), bearer);
    // The same key through X-Api-Key is the same tenant.
    EXPECT_EQ(identify_with(header_source("X-Api-Key", true), reg, Headers{}.add("X-Api-Key", "tok_123").input(""),
                            secret),
              bearer);
    // Other schemes are hashed whole; an empty bearer names nobody.
    EXPECT_EQ(identify_with(src, reg, Headers{}.add("Authorization", "Basic YTpi").input(""), secret),
              hash_identity(secret, "Basic YTpi"));
    EXPECT_EQ(identify_with(src, reg, Headers{}.add("Authorization", "Bearer   ").input(""), secret), std::nullopt);
}

TEST(Identify, SourcesAreTriedInOrderThenTheClientAddress) {
    Registry reg;
    reg.identity = {header_source("X-Tenant-Id", false), header_source("X-Api-Key", true, "api_key"),
                    client_ip_source()};
    Headers both;
    both.add("X-Tenant-Id", "acme").add("X-Api-Key", "k1");
    EXPECT_EQ(identify(reg, std::nullopt, both.input("192.0.2.1"), secret), "acme");
    Headers key;
    key.add("X-Tenant-Id", "not valid!").add("X-Api-Key", "k1");  // an invalid tenant is skipped
    EXPECT_EQ(identify(reg, std::nullopt, key.input("192.0.2.1"), secret), hash_identity(secret, "k1"));
    EXPECT_EQ(identify(reg, std::nullopt, Headers{}.input("192.0.2.1"), secret), "ip:192.0.2.1");
}

TEST(Identify, NoSourcesMeansTheClientAddress) {
    Registry reg;
    EXPECT_EQ(identify(reg, std::nullopt, Headers{}.add("X-Api-Key", "k1").input("192.0.2.1"), secret),
              "ip:192.0.2.1");
}

TEST(Identify, ANamedSourceOrTheClientAddress) {
    Registry reg;
    reg.identity = {header_source("X-Tenant-Id", false, "tenant"), header_source("X-Api-Key", true, "api_key")};
    Headers h;
    h.add("X-Tenant-Id", "acme").add("X-Api-Key", "k1");
    EXPECT_EQ(identify(reg, std::string("api_key"), h.input("192.0.2.1"), secret), hash_identity(secret, "k1"));
    EXPECT_EQ(identify(reg, std::string("tenant"), h.input("192.0.2.1"), secret), "acme");
    EXPECT_EQ(identify(reg, std::string("client_ip"), h.input("192.0.2.1"), secret), "ip:192.0.2.1");
    // The named source names nobody: the client address, never another source.
    EXPECT_EQ(identify(reg, std::string("api_key"), Headers{}.add("X-Tenant-Id", "acme").input("192.0.2.1"), secret),
              "ip:192.0.2.1");
}

TEST(UsesHashedIdentity, OnlyWhenASourceHashes) {
    Registry reg;
    EXPECT_FALSE(uses_hashed_identity(reg));
    reg.identity = {header_source("X-Tenant-Id", false), client_ip_source()};
    EXPECT_FALSE(uses_hashed_identity(reg));
    reg.identity.push_back(header_source("X-Api-Key", true));
    EXPECT_TRUE(uses_hashed_identity(reg));
}

}  // namespace
