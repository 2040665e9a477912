// Identity sources: hashing, address canonicalisation, X-Real-IP / X-Forwarded-For behind
// trusted proxies only, and the order of sources.
#include "ratelimitd/policy/identity.hpp"

#include "ratelimitd/policy/validate.hpp"
#include "ratelimitd/policy/cidr.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>

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
            HeaderList out;
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
    EXPECT_TRUE(ratelimitd::policy::validate_tenant(a));
    EXPECT_EQ(a.view().find("sk_live_alice"), std::string::npos);
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

TEST(CanonicalIp, AnIpv4TextIsReadAsInetPtonReadsIt) {
    // canonical_ip takes a dotted quad it can read as its own spelling, without inet_pton and
    // inet_ntop: for every text, the answer must be theirs.
    const auto by_libc = [](const std::string& text) -> std::optional<std::string> {
        unsigned char bytes[4];
        char out[INET_ADDRSTRLEN];
        if (inet_pton(AF_INET, text.c_str(), bytes) != 1) return std::nullopt;
        return std::string(inet_ntop(AF_INET, bytes, out, sizeof out));
    };
    for (const char* text : {"0.0.0.0", "255.255.255.255", "10.0.0.1", "192.168.1.100", "01.2.3.4", "1.2.3.04",
                             "1.2.3.00", "0001.2.3.4", "1.2.3.256", "1.2.3.2555", "1..2.3", ".1.2.3", "1.2.3.4.",
                             "1.2.3.", "1.2.3.4a", "a1.2.3.4", "1.2.3.-4", "1.2.3.+4", "1 .2.3.4", "1.2.3.4 5",
                             "999.1.1.1", "1.2.3.0x4", "127.1"}) {
        EXPECT_EQ(canonical_ip(text), by_libc(text)) << text;
    }
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

// A canonical IPv4 peer is made its tenant without canonical_ip's copy: every spelling of one
// address still gives one tenant, and a prefix shorter than 32 still groups.
TEST(ClientIp, EverySpellingOfAnIpv4PeerIsOneTenant) {
    Headers h;
    for (const char* peer : {"203.0.113.9", " 203.0.113.9\t", "203.0.113.9:443", "[::ffff:203.0.113.9]:443",
                             "::ffff:203.0.113.9"}) {
        EXPECT_EQ(client_ip_tenant({}, h.input(peer)), "ip:203.0.113.9") << peer;
    }
    EXPECT_EQ(client_ip_tenant({}, h.input("203.0.113.9"), ClientIpPrefixes{.ipv4 = 24, .ipv6 = 64}),
              "ip:203.0.113.0/24");
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
    const ClientIpPrefixes per_address{32, 128};
    EXPECT_EQ(client_ip_tenant(trusted, h.input("::1"), per_address), "ip:2001:db8::7");
    EXPECT_EQ(client_ip_tenant(trusted, h.input("::ffff:10.0.0.1"), per_address), "ip:2001:db8::7");
    EXPECT_EQ(client_ip_tenant(trusted, Headers{}.input("::ffff:192.0.2.1"), per_address), "ip:192.0.2.1");
}

//------------------------------------------------------------------------------
// Grouping addresses into networks

TEST(AddressTenant, Ipv6IsItsSlash64ByDefault) {
    const ClientIpPrefixes defaults;
    EXPECT_EQ(defaults.ipv6, 64);
    EXPECT_EQ(defaults.ipv4, 32);
    EXPECT_EQ(address_tenant("2001:db8:1:2:aaaa:bbbb:cccc:dddd", defaults), "ip:2001:db8:1:2::/64");
    EXPECT_EQ(address_tenant("2001:db8:1:2::1", defaults), "ip:2001:db8:1:2::/64");
    EXPECT_EQ(address_tenant("2001:db8:1:3::1", defaults), "ip:2001:db8:1:3::/64");
    EXPECT_EQ(address_tenant("::1", defaults), "ip:::/64");
    EXPECT_EQ(address_tenant("192.0.2.1", defaults), "ip:192.0.2.1");  // IPv4 stays per address
}

TEST(AddressTenant, OtherLengthsClearTheHostBits) {
    EXPECT_EQ(address_tenant("2001:db8:1:2::1", {32, 128}), "ip:2001:db8:1:2::1");  // full: the address
    EXPECT_EQ(address_tenant("2001:db8:1:2::1", {32, 48}), "ip:2001:db8:1::/48");
    EXPECT_EQ(address_tenant("2001:db8:1:ffff::1", {32, 56}), "ip:2001:db8:1:ff00::/56");
    EXPECT_EQ(address_tenant("2001:db8:ffff::1", {32, 33}), "ip:2001:db8:8000::/33");
    EXPECT_EQ(address_tenant("2001:db8::1:2", {32, 127}), "ip:2001:db8::1:2/127");
    EXPECT_EQ(address_tenant("2001:db8::1:3", {32, 127}), "ip:2001:db8::1:2/127");
    EXPECT_EQ(address_tenant("10.1.2.3", {16, 64}), "ip:10.1.0.0/16");
    EXPECT_EQ(address_tenant("10.1.2.3", {24, 64}), "ip:10.1.2.0/24");
    EXPECT_EQ(address_tenant("10.1.2.3", {31, 64}), "ip:10.1.2.2/31");
    EXPECT_EQ(address_tenant("10.1.2.3", {32, 64}), "ip:10.1.2.3");
}

TEST(AddressTenant, GroupedTenantsAreValidTenants) {
    for (const auto& t : {address_tenant("2001:db8:1:2::1", {}), address_tenant("10.1.2.3", {16, 64}),
                          address_tenant("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", {32, 127})}) {
        ASSERT_TRUE(t);
        EXPECT_TRUE(ratelimitd::policy::validate_tenant(*t)) << *t;
    }
}

TEST(AddressTenant, NotAnAddressIsNobody) {
    EXPECT_EQ(address_tenant("unknown", {}), std::nullopt);
    EXPECT_EQ(address_tenant("", {}), std::nullopt);
    EXPECT_EQ(address_tenant("[::1]", {}), std::nullopt);  // canonical text only
}

TEST(ClientIp, AddressesOfOneSlash64AreOneTenantWhereverTheyComeFrom) {
    const auto trusted = nets({"127.0.0.1/32", "::1/128"});
    const std::string net = "ip:2001:db8:1:2::/64";
    // the peer itself
    EXPECT_EQ(client_ip_tenant(trusted, Headers{}.input("2001:db8:1:2::1")), net);
    EXPECT_EQ(client_ip_tenant(trusted, Headers{}.input("2001:db8:1:2:ffff:ffff:ffff:ffff")), net);
    // X-Real-IP and X-Forwarded-For behind a trusted proxy
    EXPECT_EQ(client_ip_tenant(trusted, Headers{}.add("X-Real-IP", "2001:db8:1:2::a").input("127.0.0.1")), net);
    EXPECT_EQ(client_ip_tenant(trusted, Headers{}.add("X-Forwarded-For", "[2001:db8:1:2::b]:443").input("::1")), net);
    EXPECT_NE(client_ip_tenant(trusted, Headers{}.add("X-Real-IP", "2001:db8:1:3::a").input("127.0.0.1")), net);
}

TEST(ClientIp, TrustIsDecidedOnTheFullAddressNotItsNetwork) {
    // The proxy ::1 is trusted; ::2 shares its /64 but is not, so its X-Real-IP is not believed.
    const auto trusted = nets({"::1/128"});
    const auto h = Headers{}.add("X-Real-IP", "192.0.2.9");
    EXPECT_EQ(client_ip_tenant(trusted, h.input("::1")), "ip:192.0.2.9");
    EXPECT_EQ(client_ip_tenant(trusted, h.input("::2")), "ip:::/64");
}

TEST(Identify, ClientIpSourcesGroupByTheirOwnPrefixes) {
    Registry reg;
    IdentitySource wide = client_ip_source();
    wide.prefixes = {24, 48};
    IdentitySource exact = client_ip_source();
    exact.name = "exact_ip";
    exact.prefixes = {32, 128};
    reg.identity = {header_source("X-Api-Key", true, "api_key"), exact};
    reg.client_ip = wide.prefixes;  // as the loader sets it from the source named client_ip
    const Headers none;
    const auto in = none.input("2001:db8:1:2::1");
    // A named source uses its own prefixes.
    EXPECT_EQ(identify(reg, std::string("exact_ip"), in, secret), "ip:2001:db8:1:2::1");
    // client_ip, and the fallback when nothing names the request, use the registry's.
    EXPECT_EQ(identify(reg, std::string("client_ip"), in, secret), "ip:2001:db8:1::/48");
    EXPECT_EQ(identify(reg, std::string("api_key"), in, secret), "ip:2001:db8:1::/48");
    reg.identity = {header_source("X-Api-Key", true, "api_key")};
    EXPECT_EQ(identify(reg, std::nullopt, Headers{}.input("10.9.8.7"), secret), "ip:10.9.8.0/24");
    // In the list, the source that names the request decides.
    reg.identity = {exact};
    EXPECT_EQ(identify(reg, std::nullopt, in, secret), "ip:2001:db8:1:2::1");
}

TEST(Identify, WithoutIdentitySourcesIpv6IsGroupedPerSlash64) {
    const Registry reg;
    EXPECT_EQ(identify(reg, std::nullopt, Headers{}.input("2001:db8:1:2::1"), secret), "ip:2001:db8:1:2::/64");
    EXPECT_EQ(identify(reg, std::nullopt, Headers{}.input("2001:db8:1:2::2"), secret), "ip:2001:db8:1:2::/64");
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

TEST(IdentifyWith, BearerSchemeIsCaseInsensitive) {
    Registry reg;
    const auto src = header_source("Authorization", true);
    const auto expected = hash_identity(secret, "tok_123");
    for (const char* value : {"Bearer tok_123", "bearer tok_123", "BEARER tok_123", "BeArEr\ttok_123"}) {
        EXPECT_EQ(identify_with(src, reg, Headers{}.add("authorization", value).input(""), secret), expected)
            << value;
    }
    EXPECT_NE(identify_with(src, reg, Headers{}.add("Authorization", "Bearertok_123").input(""), secret), expected);
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
