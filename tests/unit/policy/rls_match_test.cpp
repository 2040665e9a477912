// match_descriptor: envoyproxy/ratelimit's walk of a domain's tree, case by case.
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/policy/rls_match.hpp"

#include <gtest/gtest.h>

namespace {

using namespace ratelimitd::policy;

const char* const rules = R"(
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
    Config cfg = parse_config(rules, "m.yaml");
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

TEST_F(Match, AStarAloneTakesEveryValueAndOnlyATrailingStarIsAWildcard) {
    EXPECT_EQ(reach({{"any", "whatever"}}), 5);
    EXPECT_EQ(reach({{"any", ""}}), 5);
    EXPECT_EQ(reach({{"mid", "axb"}}), -1);
    EXPECT_EQ(reach({{"mid", "a*b"}}), 6);  // the literal value
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

}  // namespace
