// match_descriptor: envoyproxy/ratelimit's walk of a domain's tree, case by case.
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/policy/rls_match.hpp"
#include "ratelimitd/policy/wildcard_pattern.hpp"

#include <gtest/gtest.h>


namespace {

using namespace ratelimitd::policy;

const char* const match_rules = R"(
domains:
  - domain: m
    descriptors:
      - {key: ip, rate_limit: {unit: second, requests_per_unit: 1}}
      - {key: ip, value: 10.0.0.1, rate_limit: {unit: second, requests_per_unit: 2}}
      - {key: ip, value: 10.*, rate_limit: {unit: second, requests_per_unit: 3}}
      - {key: ip, value: 10.0.*, rate_limit: {unit: second, requests_per_unit: 4}}
      - {key: any, value: '*', rate_limit: {unit: second, requests_per_unit: 5}}
      - {key: mid, value: 'a*b', rate_limit: {unit: second, requests_per_unit: 6}}
      - {key: a, value: 'b_c*', rate_limit: {unit: second, requests_per_unit: 7}}
      - key: tenant
        value: acme
        descriptors:
          - {key: path, rate_limit: {unit: minute, requests_per_unit: 8}}
          - key: path
            value: /deep
            descriptors:
              - {key: method, rate_limit: {unit: minute, requests_per_unit: 9}}
      - key: leaf
        rate_limit: {unit: minute, requests_per_unit: 10}
)";

class Match : public ::testing::Test {
protected:
    Config cfg = parse_config(match_rules, "m.yaml");
    const RlsDomain& domain = *cfg.registry.domains->find("m");

    /// requests_per_unit of the rule `entries` reach: -1 for none, 0 for a rule without a limit.
    long long reach(std::vector<RlsEntry> entries) const {
        const RlsRule* r = match_descriptor(domain, entries);
        if (r == nullptr) return -1;
        return r->limit == RlsRule::Limit::limited ? static_cast<long long>(r->requests_per_unit) : 0;
    }
};

TEST_F(Match, ExactValueBeatsWildcardBeatsKeyOnly) {
    EXPECT_EQ(reach({{"ip", "10.0.0.1"}}), 2);
    EXPECT_EQ(reach({{"ip", "10.0.0.2"}}), 3);  // the first wildcard in file order, not the longest
    EXPECT_EQ(reach({{"ip", "192.0.2.1"}}), 1);
    EXPECT_EQ(reach({{"ip", ""}}), 1);  // an empty value is just a value: the key-only rule
}

TEST_F(Match, AStarAloneTakesEveryValueAndAStarAnywhereIsAWildcard) {
    EXPECT_EQ(reach({{"any", "whatever"}}), 5);
    EXPECT_EQ(reach({{"any", ""}}), 5);
    EXPECT_EQ(reach({{"mid", "axb"}}), 6);
    EXPECT_EQ(reach({{"mid", "ab"}}), 6);   // '*' takes the empty run
    EXPECT_EQ(reach({{"mid", "a*b"}}), 6);  // the literal value too
    EXPECT_EQ(reach({{"mid", "ba"}}), -1);
    EXPECT_EQ(reach({{"mid", "abx"}}), -1);
}

TEST_F(Match, KeyAndValueAreComparedApart) {
    EXPECT_EQ(reach({{"a", "b_cde"}}), 7);
    EXPECT_EQ(reach({{"a_b", "cde"}}), -1);
}

TEST_F(Match, TheLastEntryDecidesAndEveryEntryMustMatch) {
    EXPECT_EQ(reach({{"tenant", "acme"}}), 0);                      // a rule without a limit
    EXPECT_EQ(reach({{"tenant", "acme"}, {"path", "/x"}}), 8);
    EXPECT_EQ(reach({{"tenant", "acme"}, {"path", "/deep"}}), 0);  // exact /deep has no limit of its own
    EXPECT_EQ(reach({{"tenant", "acme"}, {"path", "/deep"}, {"method", "GET"}}), 9);
    EXPECT_EQ(reach({{"tenant", "other"}, {"path", "/x"}}), -1);
    EXPECT_EQ(reach({{"tenant", "acme"}, {"verb", "GET"}}), -1);
}

TEST_F(Match, MoreEntriesThanLevelsMatchNothing) {
    EXPECT_EQ(reach({{"leaf", "x"}}), 10);
    EXPECT_EQ(reach({{"leaf", "x"}, {"more", "y"}}), -1);
    EXPECT_EQ(reach({{"tenant", "acme"}, {"path", "/x"}, {"method", "GET"}}), -1);
}

TEST_F(Match, EntriesAreMatchedInOrder) {
    EXPECT_EQ(reach({{"path", "/x"}, {"tenant", "acme"}}), -1);
    EXPECT_EQ(reach({{"unknown", "v"}}), -1);
    EXPECT_EQ(reach({}), -1);
}

TEST(Wildcard, MiddleAndMultipleStarsMatchAsEnvoyproxyRatelimitDoes) {
    const WildcardPattern mid("bar*b");
    for (const char* v : {"barab", "bar123b", "barb"}) EXPECT_TRUE(mid.matches(v)) << v;
    for (const char* v : {"bara", "xbarb", "bar", "ba"}) EXPECT_FALSE(mid.matches(v)) << v;
    const WildcardPattern multi("foo*bar*baz");
    for (const char* v : {"foo123bar456baz", "foobarbaz", "foobarbarbaz", "foobazbarbaz"}) {
        EXPECT_TRUE(multi.matches(v)) << v;
    }
    for (const char* v : {"foo123baz", "bar456baz", "foobaz", "foobarba", "foobazbar"}) EXPECT_FALSE(multi.matches(v)) << v;
    EXPECT_TRUE(WildcardPattern("*").matches(""));
    EXPECT_TRUE(WildcardPattern("a**b").matches("ab"));
    EXPECT_TRUE(WildcardPattern("*x*").matches("yyxyy"));
    EXPECT_FALSE(WildcardPattern("*x*").matches("yyyy"));
    // Head and tail never share bytes: "aba" is not "ab" + anything + "ba".
    EXPECT_FALSE(WildcardPattern("ab*ba").matches("aba"));
    EXPECT_TRUE(WildcardPattern("ab*ba").matches("abba"));
    // A part that overlaps itself is found where it starts (KMP's fallback).
    EXPECT_TRUE(WildcardPattern("*aab*").matches("aaab"));
    EXPECT_TRUE(WildcardPattern("*abab*c").matches("ababaababc"));
}

// The hostile side: a caller picks the value (kept up to policy::max_kept_value_bytes), the operator
// the pattern (up to 1024 bytes). A naive search costs |value| x |part| comparisons per part
// for "aaa...ab" parts in a value of 'a's; this one stays linear, so the worst pair below
// (4096-byte value, 1000-byte pattern of many parts, 1000 rules' worth of them) is quick.
TEST(Wildcard, AHostilePatternAndValueCostLinearTime) {
    const std::string value = std::string(4095, 'a') + "z";
    std::string many_parts = "a";
    while (many_parts.size() < 1000) many_parts += "*a";
    many_parts += "*b*z";  // head and tail match, 499 parts are found, the last scans the rest
    const std::string long_part = "*" + std::string(1000, 'a') + "b*";  // naive: ~4M comparisons
    const WildcardPattern parts(many_parts);
    const WildcardPattern part(long_part);
    EXPECT_FALSE(parts.matches(value));
    EXPECT_FALSE(part.matches(value));
    // Counted, not timed: linear is at most two comparisons per byte of the value plus the
    // pattern's bytes (8,192 + 1,000 here); the naive search of the long part makes ~4M.
    const std::size_t linear = 2 * value.size() + many_parts.size();
    EXPECT_LE(parts.comparisons(value), linear);
    EXPECT_LE(part.comparisons(value), 2 * value.size() + long_part.size());
    EXPECT_TRUE(part.matches(std::string(5000, 'a') + "b"));
    EXPECT_TRUE(parts.matches(std::string(600, 'a') + "bz"));
}

}  // namespace
