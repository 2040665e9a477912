// envoy_config: and domains:: envoyproxy/ratelimit's config format loads unchanged, every key
// lands where the planner reads it, and every refusal names the file and the field path.
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include "unit/policy/erl_examples_dir.hpp"

#include "unit/policy/config_refusals.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace {

using ratelimitd::test::refusal;

using ratelimitd::test::reference_dir;

using namespace ratelimitd::policy;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string envoy_data_dir = std::string(RATELIMITD_TEST_DATA_DIR) + "/envoy";
// envoyproxy/ratelimit's example configs, verbatim, in the tree (tests/data/erl-examples/README.md).

/// The message a registry text is refused with ("" when it loads).
/// A one-domain registry around `descriptors` (YAML flow or block text, indented by 4).
std::string with_descriptors(const std::string& descriptors) {
    return "domains:\n  - domain: d\n    descriptors:\n" + descriptors;
}

const RlsRule& rule_at(const RlsLevel& level, std::size_t i) { return level.rules.at(i); }

TEST(EnvoyConfig, LoadsEveryFeatureOfTheFormat) {
    const Config cfg = load_config(envoy_data_dir + "/valid/registry_with_file.yaml");
    ASSERT_TRUE(cfg.registry.domains);
    const RlsDomain* d = cfg.registry.domains->find("features");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->source_file, fs::path(envoy_data_dir + "/valid/features.yaml").lexically_normal().string());
    ASSERT_EQ(d->root.rules.size(), 12u);

    const RlsRule& tenant = rule_at(d->root, 0);
    EXPECT_EQ(tenant.limit, RlsRule::Limit::none);
    EXPECT_EQ(tenant.label, "features.tenant_acme");
    ASSERT_EQ(tenant.children.rules.size(), 3u);
    const RlsRule& login = rule_at(tenant.children, 1);
    EXPECT_EQ(login.label, "features.tenant_acme.path_/login");
    EXPECT_EQ(login.limit_name, "login");
    EXPECT_EQ(login.unit, RlsUnit::minute);
    EXPECT_EQ(login.requests_per_unit, 2u);
    EXPECT_EQ(login.policy.name, login.label);
    EXPECT_EQ(login.policy.algorithm, Algorithm::fixed_window);
    EXPECT_EQ(login.policy.window, 60s);
    EXPECT_TRUE(login.aligned);
    const RlsRule& api = rule_at(tenant.children, 2);
    EXPECT_EQ(api.match, RlsRule::ValueMatch::wildcard);
    EXPECT_EQ(api.value, "/api*");
    ASSERT_TRUE(api.wildcard);
    EXPECT_TRUE(api.wildcard->matches("/api/v1"));
    EXPECT_EQ(api.label, "features.tenant_acme.path_/api*");

    EXPECT_EQ(rule_at(d->root, 1).unit, RlsUnit::second);  // "SECOND": any case
    EXPECT_EQ(rule_at(d->root, 1).match, RlsRule::ValueMatch::any);
    EXPECT_EQ(rule_at(d->root, 2).policy.limit, 0);
    EXPECT_EQ(rule_at(d->root, 2).label, "features.remote_address_50.0.0.5");
    EXPECT_EQ(rule_at(d->root, 2).key_name, "features.remote%5Faddress_50%2E0%2E0%2E5");
    EXPECT_EQ(rule_at(d->root, 3).limit, RlsRule::Limit::none);
    EXPECT_EQ(rule_at(d->root, 4).limit, RlsRule::Limit::unlimited);
    EXPECT_TRUE(rule_at(d->root, 5).policy.shadow);
    EXPECT_EQ(rule_at(d->root, 5).policy.window, 24h);
    EXPECT_EQ(rule_at(d->root, 6).replaces, std::vector<std::string>{"login"});
    EXPECT_TRUE(rule_at(d->root, 7).detailed_metric);
    EXPECT_EQ(rule_at(d->root, 7).policy.window, std::chrono::hours(24 * 30));
    const RlsRule& gold = rule_at(d->root, 8);
    EXPECT_EQ(gold.policy.algorithm, Algorithm::token_bucket);
    EXPECT_EQ(gold.policy.on_store_error, OnStoreError::deny);
    EXPECT_EQ(gold.policy.burst, 60);
    EXPECT_FALSE(gold.aligned);
    EXPECT_EQ(rule_at(d->root, 9).policy.window, std::chrono::hours(24 * 365));
    EXPECT_TRUE(rule_at(d->root, 9).policy.long_ttl);
    EXPECT_EQ(rule_at(d->root, 10).requests_per_unit, 1u);  // quota_mode and metadata accepted
    EXPECT_EQ(rule_at(d->root, 11).value, "200");            // an unquoted number is text
    EXPECT_EQ(cfg.registry.policies.size(), 1u);
}

TEST(EnvoyConfig, LoadsADirectoryAndTheRegistrysOwnDomains) {
    const Config cfg = load_config(envoy_data_dir + "/valid/registry_with_envoy.yaml");
    ASSERT_TRUE(cfg.registry.domains);
    const auto& domains = cfg.registry.domains->by_name;
    ASSERT_EQ(domains.size(), 3u);  // notes.txt is not read
    EXPECT_EQ(domains.at("dir-a").root.rules.at(0).unit, RlsUnit::second);
    EXPECT_EQ(domains.at("dir-b").root.rules.at(0).unit, RlsUnit::minute);
    EXPECT_EQ(domains.at("inline").root.rules.at(0).unit, RlsUnit::hour);
    EXPECT_TRUE(cfg.registry.policies.empty());  // Envoy rules only: no policies needed
    EXPECT_EQ(cfg.registry.domains->files.size(), 3u);
}

TEST(EnvoyConfig, WithoutEitherKeyThereAreNoDomainsAndPoliciesStayRequired) {
    const Config cfg = parse_config("policies: {a: {algorithm: gcra, limit: 1, window: 1s}}\n", "r.yaml");
    EXPECT_FALSE(cfg.registry.domains);
    EXPECT_EQ(refusal("prefix: rl\n"), "r.yaml: policies: missing (expected a map of policy names to policies)");
}

TEST(EnvoyConfig, ADomainDefinedTwiceAcrossFilesIsRefused) {
    const std::string msg = refusal("envoy_config: ../dup\n", envoy_data_dir + "/invalid/registry_dup.yaml");
    const std::string dup = fs::path(envoy_data_dir + "/dup").lexically_normal().string();
    EXPECT_EQ(msg, dup + "/b.yaml: domain: duplicate domain \"same\" (already defined in " + dup + "/a.yaml)");
}

TEST(EnvoyConfig, ADomainDefinedTwiceInTheRegistryIsRefused) {
    EXPECT_EQ(refusal("domains:\n  - {domain: x}\n  - {domain: x}\n"),
              "r.yaml: domains[1].domain: duplicate domain \"x\" (already defined in r.yaml)");
}

TEST(EnvoyConfig, AnUnknownKeyInAFileNamesTheFileAndThePath) {
    const std::string file = envoy_data_dir + "/invalid/unknown_key.yaml";
    EXPECT_EQ(refusal("envoy_config: " + file + "\n"),
              file + ": descriptors[0].rate_limit.burst: unknown key (expected one of: unit, requests_per_unit, "
                     "unlimited, name, replaces)");
}

TEST(EnvoyConfig, AMissingPathIsRefused) {
    EXPECT_EQ(refusal("envoy_config: /nonexistent/rls\n"),
              "r.yaml: envoy_config: cannot read \"/nonexistent/rls\": no such file or directory");
    EXPECT_EQ(refusal("envoy_config: 3\n"),
              "r.yaml: envoy_config: expected a file or a directory of envoyproxy/ratelimit configs, got 3");
}

struct Refusal {
    const char* descriptors;
    const char* message;
};

class EnvoyConfigRefusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(EnvoyConfigRefusal, NamesTheFieldAndWhatWasExpected) {
    EXPECT_EQ(refusal(with_descriptors(GetParam().descriptors)), std::string("r.yaml: ") + GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    EveryRule, EnvoyConfigRefusal,
    ::testing::Values(
        Refusal{"      - {key: k, rate_limit: {unit: fortnight, requests_per_unit: 1}}\n",
                "domains[0].descriptors[0].rate_limit.unit: expected one of second, minute, hour, day, week, month, "
                "year, got \"fortnight\""},
        Refusal{"      - {key: k, rate_limit: {requests_per_unit: 1}}\n",
                "domains[0].descriptors[0].rate_limit.unit: missing (expected one of second, minute, hour, day, week, "
                "month, year)"},
        Refusal{"      - {key: k, rate_limit: {unlimited: true, unit: day, requests_per_unit: 25}}\n",
                "domains[0].descriptors[0].rate_limit.unit: not allowed with unlimited: true (an unlimited rule "
                "has no unit)"},
        Refusal{"      - {key: '', rate_limit: {unit: second, requests_per_unit: 1}}\n",
                "domains[0].descriptors[0].key: expected a descriptor key, got an empty one"},
        Refusal{"      - {value: v}\n", "domains[0].descriptors[0].key: missing (expected a descriptor key)"},
        Refusal{"      - {key: k, value: v}\n      - {key: k, value: v}\n",
                "domains[0].descriptors[1]: duplicate descriptor: key \"k\" value \"v\" is already "
                "domains[0].descriptors[0]"},
        Refusal{"      - {key: k}\n      - {key: k, descriptors: [{key: j}]}\n",
                "domains[0].descriptors[1]: duplicate descriptor: key \"k\" without a value is already "
                "domains[0].descriptors[0]"},
        Refusal{"      - {key: k, descriptors: [{key: j}, {key: j}]}\n",
                "domains[0].descriptors[0].descriptors[1]: duplicate descriptor: key \"j\" without a value is "
                "already domains[0].descriptors[0].descriptors[0]"},
        Refusal{"      - {key: k, rate_limit: {unit: second, requests_per_unit: 1, name: a, replaces: [{name: a}]}}\n",
                "domains[0].descriptors[0].rate_limit.replaces[0].name: a limit cannot replace itself (\"a\" is "
                "its own name)"},
        Refusal{"      - {key: k, rate_limit: {unit: second, requests_per_unit: 1, replaces: [{name: ''}]}}\n",
                "domains[0].descriptors[0].rate_limit.replaces[0].name: expected a limit name, got an empty one"},
        Refusal{"      - {key: k, rate_limit: {unit: second, requests_per_unit: ten}}\n",
                "domains[0].descriptors[0].rate_limit.requests_per_unit: expected an integer 0..1000000000, got "
                "\"ten\""},
        Refusal{"      - {key: k, rate_limit: {unit: second, requests_per_unit: -1}}\n",
                "domains[0].descriptors[0].rate_limit.requests_per_unit: expected an integer 0..1000000000, got "
                "-1"},
        Refusal{"      - {key: k, algorithm: gcra}\n",
                "domains[0].descriptors[0].algorithm: only allowed beside a rate_limit with a unit (this rule "
                "decides nothing)"},
        Refusal{"      - {key: k, algorithm: leaky, rate_limit: {unit: second, requests_per_unit: 1}}\n",
                "domains[0].descriptors[0].algorithm: expected one of token_bucket, sliding_log, fixed_window, "
                "gcra, sliding_window, got \"leaky\""},
        Refusal{"      - {key: k, on_store_error: maybe, rate_limit: {unit: second, requests_per_unit: 1}}\n",
                "domains[0].descriptors[0].on_store_error: expected one of allow, deny, got \"maybe\""},
        Refusal{"      - {key: k, algorithm: gcra, rate_limit: {unit: second, requests_per_unit: 0}}\n",
                "domains[0].descriptors[0].rate_limit.requests_per_unit: 0 (deny every request) needs the default "
                "algorithm fixed_window, this rule uses gcra"},
        Refusal{"      - {key: k, algorithm: sliding_log, rate_limit: {unit: second, requests_per_unit: 100001}}\n",
                "domains[0].descriptors[0].rate_limit.requests_per_unit: expected at most 100000 for sliding_log "
                "(each admitted unit is one sorted-set member), got 100001"},
        Refusal{"      - {key: k, algorithm: gcra, rate_limit: {unit: year, requests_per_unit: 1000000}}\n",
                "domains[0].descriptors[0].rate_limit.requests_per_unit: expected requests_per_unit * unit in ms "
                "<= 2^53 so gcra stays exact in Lua, got 1000000 * 31536000000"},
        Refusal{"      - {key: k, value: [1]}\n",
                "domains[0].descriptors[0].value: expected a descriptor value (text), got a list"},
        Refusal{"      - {key: k, shadow_mode: yes please}\n",
                "domains[0].descriptors[0].shadow_mode: expected true or false, got \"yes please\""},
        Refusal{"      - key: k\n        descriptors: {key: j}\n",
                "domains[0].descriptors[0].descriptors: expected a list of descriptors such as {key: k, value: "
                "v}, got a map"},
        Refusal{"      - {key: k, rate_limit: [1]}\n",
                "domains[0].descriptors[0].rate_limit: expected a map with unit and requests_per_unit, got a list"}));

TEST(EnvoyConfig, TheDomainItselfIsChecked) {
    EXPECT_EQ(refusal("domains:\n  - {descriptors: []}\n"), "r.yaml: domains[0].domain: missing (expected a domain name)");
    EXPECT_EQ(refusal("domains:\n  - {domain: ''}\n"), "r.yaml: domains[0].domain: expected 1..1024 bytes, got 0");
    EXPECT_EQ(refusal("domains:\n  - {domain: d, rules: []}\n"),
              "r.yaml: domains[0].rules: unknown key (expected one of: domain, descriptors)");
    EXPECT_EQ(refusal("domains: {domain: d}\n"),
              "r.yaml: domains: expected a list of {domain, descriptors} as envoyproxy/ratelimit writes them, got a "
              "map");
}

TEST(EnvoyConfig, DescriptorsNestAtMostSixteenLevels) {
    std::string nested = "domain: d\ndescriptors: ";
    for (int i = 0; i < 17; ++i) nested += "[{key: k, descriptors: ";
    nested += "[]";
    for (int i = 0; i < 17; ++i) nested += "}]";
    const fs::path file = fs::temp_directory_path() / ("rls_nested_" + std::to_string(::getpid()) + ".yaml");
    {
        std::FILE* f = std::fopen(file.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs(nested.c_str(), f);
        std::fclose(f);
    }
    const std::string msg = refusal("envoy_config: " + file.string() + "\n");
    fs::remove(file);
    EXPECT_NE(msg.find("descriptors nest deeper than 16 levels"), std::string::npos) << msg;
}

// Every key envoyproxy/ratelimit reads loads, `true` or `false` (rls_quota_share_test.cpp: what
// each then does).
TEST(EnvoyConfig, EveryDescriptorKeyEnvoyproxyRatelimitReadsLoads) {
    for (const std::string key : {"quota_mode", "share_threshold", "value_to_metric", "detailed_metric", "shadow_mode"}) {
        for (const std::string value : {"true", "false"}) {
            EXPECT_EQ(refusal(with_descriptors("      - {key: k, value: 'a*', " + key + ": " + value +
                                               ", rate_limit: {unit: second, requests_per_unit: 1}}\n")),
                      "")
                << key << ": " << value;
        }
    }
}

TEST(EnvoyConfig, DeniedCallsAreRefusedByDefaultAndChargedWhenAsked) {
    const auto charge_of = [](const std::string& text) {
        return parse_config(text + with_descriptors("      - {key: k, rate_limit: {unit: second, requests_per_unit: 1}}\n"),
                            "r.yaml")
            .registry.domains->charge_denied;
    };
    EXPECT_FALSE(charge_of(""));
    EXPECT_FALSE(charge_of("envoy_denied_calls: refuse\n"));
    EXPECT_TRUE(charge_of("envoy_denied_calls: charge\n"));
    EXPECT_EQ(refusal("envoy_denied_calls: always\n" + with_descriptors("      - {key: k}\n")),
              "r.yaml: envoy_denied_calls: expected one of refuse, charge, got \"always\"");
    EXPECT_EQ(refusal("envoy_denied_calls: charge\npolicies: {a: {algorithm: gcra, limit: 1, window: 1s}}\n"),
              "r.yaml: envoy_denied_calls: only allowed with domains:, envoy_config: or xds_server (no Envoy rules here)");
}

/// envoyproxy/ratelimit's own example configs, unchanged: each loads (example.yaml's
/// quota_mode too), but for the one it refuses itself (unlimited beside a unit).
TEST(EnvoyConfig, LoadsEnvoyproxyRatelimitsOwnExamples) {
    int loaded = 0;
    for (const auto& entry : fs::directory_iterator(reference_dir)) {
        if (entry.path().extension() != ".yaml") continue;
        const std::string msg = refusal("envoy_config: " + entry.path().string() + "\n");
        if (entry.path().filename() == "unlimited_with_unit.yaml") {
            EXPECT_EQ(msg, entry.path().string() +
                               ": descriptors[0].rate_limit.unit: not allowed with unlimited: true (an unlimited "
                               "rule has no unit)");
        } else {
            EXPECT_EQ(msg, "") << entry.path();
            ++loaded;
        }
    }
    EXPECT_GE(loaded, 7) << "example.yaml (quota_mode: true) included";
}

}  // namespace
