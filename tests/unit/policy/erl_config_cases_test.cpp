// envoyproxy/ratelimit's own config tests (test/config/config_test.go: TestBasicConfig,
// TestWildcardConfig, TestShadowModeConfig), case by case, on its own example files: each
// descriptor reaches the limit those tests expect, or none.
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/policy/rls_match.hpp"

#include "unit/policy/erl_examples_dir.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <ostream>

namespace {

using ratelimitd::test::reference_dir;

using namespace ratelimitd::policy;


struct ErlCase {
    std::string file;
    std::vector<RlsEntry> entries;
    /// What envoyproxy/ratelimit's test expects: "none", "unlimited", or "N/unit" with
    /// " shadow" for a shadow_mode limit, and " name=X" for a named one.
    std::string expected;
    /// The stat name the test expects (our label), "" when it asserts none.
    std::string label = "";
};

/// A failing case names its file and descriptor, not the bytes of its parameter.
void PrintTo(const ErlCase& c, std::ostream* out) {
    *out << c.file << ":";
    for (const auto& e : c.entries) *out << " " << e.key << "=" << e.value;
}

std::string outcome(const RlsRule* r) {
    if (r == nullptr || r->limit == RlsRule::Limit::none) return "none";
    if (r->limit == RlsRule::Limit::unlimited) return "unlimited";
    std::string out = std::to_string(r->requests_per_unit) + "/" + to_string(r->unit);
    if (r->policy.shadow) out += " shadow";
    if (!r->limit_name.empty()) out += " name=" + r->limit_name;
    return out;
}

/// Each file loaded once, on its own (several share the domain test-domain).
const RlsDomain& domain_of(const std::string& file) {
    static std::map<std::string, std::unique_ptr<Config>> loaded;
    auto& cfg = loaded[file];
    if (!cfg) cfg = std::make_unique<Config>(parse_config("envoy_config: " + reference_dir + "/" + file + "\n", "r.yaml"));
    return *cfg->registry.domains->find("test-domain");
}

class ErlConfigCase : public ::testing::TestWithParam<ErlCase> {};

TEST_P(ErlConfigCase, ReachesTheLimitEnvoyproxyRatelimitsTestExpects) {
    const ErlCase& c = GetParam();
    const RlsRule* rule = match_descriptor(domain_of(c.file), c.entries);
    EXPECT_EQ(outcome(rule), c.expected);
    if (!c.label.empty()) {
        ASSERT_NE(rule, nullptr);
        EXPECT_EQ(rule->label, c.label);
    }
}

const std::string basic = "basic_config.yaml";
const std::string wild = "wildcard.yaml";
const std::string shadow = "shadowmode_config.yaml";

INSTANTIATE_TEST_SUITE_P(
    TestBasicConfig, ErlConfigCase,
    ::testing::Values(ErlCase{basic, {{"key1", "something"}}, "none"}, ErlCase{basic, {{"key1", "value1"}}, "none"},
                      ErlCase{basic, {{"key2", "value2"}, {"subkey", "subvalue"}}, "none"},
                      ErlCase{basic, {{"key5", "value5"}, {"subkey5", "subvalue"}}, "none"},
                      ErlCase{basic, {{"key1", "value1"}, {"subkey1", "something"}}, "5/second",
                              "test-domain.key1_value1.subkey1"},
                      ErlCase{basic, {{"key1", "value1"}, {"subkey1", "subvalue1"}}, "10/second",
                              "test-domain.key1_value1.subkey1_subvalue1"},
                      ErlCase{basic, {{"key2", "something"}}, "20/minute", "test-domain.key2"},
                      ErlCase{basic, {{"key2", "value2"}}, "30/minute", "test-domain.key2_value2"},
                      ErlCase{basic, {{"key2", "value3"}}, "none"},
                      ErlCase{basic, {{"key3", "foo"}}, "1/hour", "test-domain.key3"},
                      ErlCase{basic, {{"key4", "foo"}}, "1/day name=key4_rate_limit", "test-domain.key4"},
                      ErlCase{basic, {{"key6", "foo"}}, "unlimited"},
                      ErlCase{basic, {{"key7", "unspecified_value"}}, "70/minute"},
                      ErlCase{basic, {{"key7", "another_value"}}, "70/minute"}));

INSTANTIATE_TEST_SUITE_P(
    TestWildcardConfig, ErlConfigCase,
    ::testing::Values(ErlCase{wild, {{"noVal", "foo1"}}, "20/minute", "test-domain.noVal"},
                      ErlCase{wild, {{"noVal", "foo2"}}, "20/minute", "test-domain.noVal"},
                      ErlCase{wild, {{"wild", "foo1"}}, "20/minute", "test-domain.wild_foo*"},
                      ErlCase{wild, {{"wild", "foo2"}}, "20/minute", "test-domain.wild_foo*"},
                      ErlCase{wild, {{"nestedWild", "val1"}, {"wild", "goo2"}}, "20/minute",
                              "test-domain.nestedWild_val1.wild_goo*"},
                      ErlCase{wild, {{"wild", "bar"}}, "none"}, ErlCase{wild, {{"noWild", "foo1"}}, "none"},
                      ErlCase{wild, {{"midWild", "barab"}}, "20/minute", "test-domain.midWild_bar*b"},
                      ErlCase{wild, {{"midWild", "bar123b"}}, "20/minute", "test-domain.midWild_bar*b"},
                      ErlCase{wild, {{"midWild", "barb"}}, "20/minute"},  // '*' takes the empty run too
                      ErlCase{wild, {{"midWild", "bara"}}, "none"}, ErlCase{wild, {{"midWild", "xbarb"}}, "none"},
                      ErlCase{wild, {{"multiWild", "foo123bar456baz"}}, "10/minute",
                              "test-domain.multiWild_foo*bar*baz"},
                      ErlCase{wild, {{"multiWild", "foobarbaz"}}, "10/minute"},
                      ErlCase{wild, {{"multiWild", "foo123baz"}}, "none"},
                      ErlCase{wild, {{"multiWild", "bar456baz"}}, "none"}));

INSTANTIATE_TEST_SUITE_P(
    TestShadowModeConfig, ErlConfigCase,
    ::testing::Values(ErlCase{shadow, {{"key1", "value1"}, {"subkey1", "something"}}, "5/second"},
                      ErlCase{shadow, {{"key1", "value1"}, {"subkey1", "subvalue1"}}, "10/second shadow"},
                      ErlCase{shadow, {{"key2", "something"}}, "20/minute shadow"},
                      ErlCase{shadow, {{"key2", "value2"}}, "30/minute"}));

}  // namespace
