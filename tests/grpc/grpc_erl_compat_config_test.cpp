// envoyproxy/ratelimit's own config files (tests/data/erl-tests/, verbatim from its test/ and
// examples/) loaded by ratelimitd in ERL mode exactly when envoyproxy/ratelimit loads them: each
// one its test/config/config_test.go expects to load is served (and answers the limit that test
// expects), each one it expects refused stops the start, naming the file and what is wrong.
// Test names: ErlCompat.Config_<its Go test name>.
#include "grpc/erl_mode_fixture.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace ratelimitd::test::grpc_erl_compat_config_test {
namespace {

namespace fs = std::filesystem;

const fs::path erl_tests = fs::path(RATELIMITD_TEST_DATA_DIR) / "erl-tests";
const fs::path config_files = erl_tests / "config";

using ErlCompat = ErlModeTest;

// --- Configs envoyproxy/ratelimit loads -------------------------------------------------

TEST_F(ErlCompat, Config_TestBasicConfig) {
    add_config(config_files / "basic_config.yaml");
    ASSERT_NO_FATAL_FAILURE(serve());
    EXPECT_EQ(limit_of("test-domain", {{"key1", "value1"}, {"subkey1", "something"}}), "5/SECOND");
    EXPECT_EQ(limit_of("test-domain", {{"key1", "value1"}, {"subkey1", "subvalue1"}}), "10/SECOND");
    EXPECT_EQ(limit_of("test-domain", {{"key4", "x"}}), "1/DAY key4_rate_limit");
    EXPECT_EQ(limit_of("test-domain", {{"key6", "x"}}), "unlimited");
    EXPECT_EQ(limit_of("foo_domain", {{"key1", "value1"}}), "none") << "no such domain";
}

TEST_F(ErlCompat, Config_TestDomainMerge) {
    vars_["MERGE_DOMAIN_CONFIG"] = "true";
    add_config(config_files / "merge_domain_key1.yaml");
    add_config(config_files / "merge_domain_key2.yaml");
    ASSERT_NO_FATAL_FAILURE(serve());
    EXPECT_EQ(limit_of("test-domain", {{"key1", "value1"}}), "10/MINUTE");
    EXPECT_EQ(limit_of("test-domain", {{"key2", "value2"}}), "20/MINUTE");
}

// Without MERGE_DOMAIN_CONFIG (its default), two files naming one domain are a duplicate domain.
TEST_F(ErlCompat, Config_TestDomainMerge_RefusedWithoutMergeDomainConfig) {
    add_config(config_files / "merge_domain_key1.yaml");
    add_config(config_files / "merge_domain_key2.yaml");
    expect_refused("merge_domain_key2.yaml: domain: duplicate domain \"test-domain\"");
}

// The descriptor's own `limit` replaces the rule's limit in the answer.
TEST_F(ErlCompat, Config_TestConfigLimitOverride) {
    add_config(config_files / "basic_config.yaml");
    ASSERT_NO_FATAL_FAILURE(serve());
    RlsRequest req = rls_request("test-domain", {Descriptor{{{"key1", "value1"}, {"subkey1", "something"}}, {}}});
    req.mutable_descriptors(0)->mutable_limit()->set_requests_per_unit(10);
    req.mutable_descriptors(0)->mutable_limit()->set_unit(RlsResponse::RateLimit::DAY);
    const RlsResponse res = call(req);
    ASSERT_EQ(res.statuses_size(), 1);
    EXPECT_EQ(res.statuses(0).current_limit().requests_per_unit(), 10u);
    EXPECT_EQ(res.statuses(0).current_limit().unit(), RlsResponse::RateLimit::DAY);
    req.mutable_descriptors(0)->mutable_limit()->set_requests_per_unit(42);
    req.mutable_descriptors(0)->mutable_limit()->set_unit(RlsResponse::RateLimit::HOUR);
    const RlsResponse changed = call(req);
    EXPECT_EQ(changed.statuses(0).current_limit().requests_per_unit(), 42u);
    EXPECT_EQ(changed.statuses(0).current_limit().unit(), RlsResponse::RateLimit::HOUR);
    // No matching domain: the override alone limits nothing.
    RlsRequest other = req;
    other.set_domain("foo_domain");
    EXPECT_FALSE(call(other).statuses(0).has_current_limit());
}

TEST_F(ErlCompat, Config_TestShadowModeConfig) {
    add_config(config_files / "shadowmode_config.yaml");
    ASSERT_NO_FATAL_FAILURE(serve());
    EXPECT_EQ(limit_of("test-domain", {{"key1", "value1"}, {"subkey1", "something"}}), "5/SECOND");
    EXPECT_EQ(limit_of("test-domain", {{"key2", "value2"}}), "30/MINUTE");
}

TEST_F(ErlCompat, Config_TestWildcardConfig) {
    add_config(config_files / "wildcard.yaml");
    ASSERT_NO_FATAL_FAILURE(serve());
    EXPECT_EQ(limit_of("test-domain", {{"wild", "foo123"}}), "20/MINUTE");
    EXPECT_EQ(limit_of("test-domain", {{"midWild", "barXYZb"}}), "20/MINUTE");
}

TEST_F(ErlCompat, Config_TestShareThreshold) {
    add_config(config_files / "share_threshold.yaml");
    ASSERT_NO_FATAL_FAILURE(serve());
    EXPECT_EQ(limit_of("test-domain", {{"files", "files/a.pdf"}}), "100/MINUTE");
}

TEST_F(ErlCompat, Config_TestMetadata) {
    add_config(config_files / "metadata.yaml");
    ASSERT_NO_FATAL_FAILURE(serve());
    EXPECT_EQ(limit_of("test-domain", {{"key1", "value1"}, {"subkey1", "something"}}), "5/SECOND");
    EXPECT_EQ(limit_of("test-domain", {{"key1", "value1"}, {"subkey1", "subvalue1"}}), "10/SECOND");
    EXPECT_EQ(limit_of("test-domain", {{"key2", "x"}}), "20/MINUTE");
}

// examples/ratelimit/config/: the two files its docker-compose mounts, loaded together.
TEST_F(ErlCompat, Config_ExamplesRatelimitConfig) {
    add_config(erl_tests / "examples" / "config.yaml");
    add_config(erl_tests / "examples" / "example.yaml");
    ASSERT_NO_FATAL_FAILURE(serve());
    EXPECT_EQ(limit_of("mongo_cps", {{"database", "users"}}), "500/SECOND");
    EXPECT_EQ(limit_of("mongo_cps", {{"database", "default"}}), "500/SECOND");
    EXPECT_EQ(limit_of("rl", {{"service", "service_1"}}), "1/MINUTE");
}

// test/integration/runtime/current/ratelimit/config/ as its integration tests load it, and
// reload.yaml added later (testConfigReload).
TEST_F(ErlCompat, Config_IntegrationRuntimeDirectory) {
    for (const char* f : {"basic.yaml", "another.yaml", "share_threshold.yaml"}) {
        add_config(erl_tests / "integration" / "config" / f);
    }
    ASSERT_NO_FATAL_FAILURE(serve());
    EXPECT_EQ(limit_of("basic", {{"key1", "foo"}}), "50/SECOND");
    EXPECT_EQ(limit_of("another", {{"key3", "foo"}}), "10/HOUR");
    EXPECT_EQ(limit_of("share-threshold-test", {{"files_no_share", "files_no_share/x"}}), "10/HOUR");
    EXPECT_EQ(limit_of("reload", {{"key1", "foo"}}), "none");
    fs::copy_file(erl_tests / "integration" / "reload.yaml", dir_ / "reload.yaml");
    fs::rename(dir_ / "reload.yaml", config_dir() / "reload.yaml");
    EXPECT_TRUE(wait_until([&] { return limit_of("reload", {{"key1", "foo"}}) == "50/SECOND"; }, process_start_bound))
        << process_.log();
}

// duplicate_domain.yaml on its own: a domain with no descriptors loads and limits nothing (it is
// refused only beside another file of that domain, TestDuplicateDomain).
TEST_F(ErlCompat, Config_DuplicateDomainFileAloneLoads) {
    add_config(config_files / "duplicate_domain.yaml");
    ASSERT_NO_FATAL_FAILURE(serve());
    EXPECT_EQ(limit_of("test-domain", {{"key1", "value1"}}), "none");
}

// --- Configs envoyproxy/ratelimit refuses: the start stops, naming the file and the fault ---
// (Its refusal at load is a panic naming the file; ratelimitd's is an exit naming the file, the
// field and what it expected.)

TEST_F(ErlCompat, Config_TestEmptyDomain) {
    add_config(config_files / "empty_domain.yaml");
    expect_refused("empty_domain.yaml: domain: missing (expected a domain name)");
}

TEST_F(ErlCompat, Config_TestDuplicateDomain) {
    add_config(config_files / "basic_config.yaml");
    add_config(config_files / "duplicate_domain.yaml");
    expect_refused("duplicate_domain.yaml: domain: duplicate domain \"test-domain\" (already defined in ");
}

TEST_F(ErlCompat, Config_TestEmptyKey) {
    add_config(config_files / "empty_key.yaml");
    expect_refused("empty_key.yaml: descriptors[0].key: missing (expected a descriptor key)");
}

TEST_F(ErlCompat, Config_TestDuplicateKey) {
    add_config(config_files / "duplicate_key.yaml");
    expect_refused("duplicate_key.yaml: descriptors[1]: duplicate descriptor: key \"key1\" value \"value1\" "
                   "is already descriptors[0]");
}

TEST_F(ErlCompat, Config_TestDuplicateKeyDomainMerge) {
    vars_["MERGE_DOMAIN_CONFIG"] = "true";
    add_config(config_files / "merge_domain_key1.yaml");
    add_config(config_files / "merge_domain_key1.yaml", "again_merge_domain_key1.yaml");
    expect_refused("duplicate descriptor: key \"key1\" value \"value1\" is already descriptors[0]");
}

TEST_F(ErlCompat, Config_TestBadLimitUnit) {
    add_config(config_files / "bad_limit_unit.yaml");
    expect_refused("bad_limit_unit.yaml: descriptors[0].rate_limit.unit: "
                   "expected one of second, minute, hour, day, week, month, year, got \"foo\"");
}

TEST_F(ErlCompat, Config_TestReplacesSelf) {
    add_config(config_files / "replaces_self.yaml");
    expect_refused("replaces_self.yaml: descriptors[0].descriptors[0].rate_limit.replaces[0].name: "
                   "a limit cannot replace itself");
}

TEST_F(ErlCompat, Config_TestReplacesEmpty) {
    add_config(config_files / "replaces_empty.yaml");
    expect_refused("replaces_empty.yaml: descriptors[0].descriptors[0].rate_limit.replaces[0].name: "
                   "expected a limit name");
}

TEST_F(ErlCompat, Config_TestBadYaml) {
    add_config(config_files / "bad_yaml.yaml");
    expect_refused("bad_yaml.yaml: (top level): expected a map with domain and descriptors");
}

TEST_F(ErlCompat, Config_TestMisspelledKey) {
    add_config(config_files / "misspelled_key.yaml");
    expect_refused("misspelled_key.yaml: descriptors[0].ratelimit: unknown key");
}

TEST_F(ErlCompat, Config_TestMisspelledKey_Key2) {
    add_config(config_files / "misspelled_key2.yaml");
    expect_refused("misspelled_key2.yaml: descriptors[0].rate_limit.requestsperunit: unknown key");
}

TEST_F(ErlCompat, Config_TestNonStringKey) {
    add_config(config_files / "non_string_key.yaml");
    expect_refused("non_string_key.yaml: 0.25: unknown key");
}

TEST_F(ErlCompat, Config_TestNonMapList) {
    add_config(config_files / "non_map_list.yaml");
    expect_refused("non_map_list.yaml: descriptors[0]: expected a map with key");
}

TEST_F(ErlCompat, Config_TestUnlimitedWithRateLimitUnit) {
    add_config(config_files / "unlimited_with_unit.yaml");
    expect_refused("unlimited_with_unit.yaml: descriptors[0].rate_limit.unit: "
                   "not allowed with unlimited: true");
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_compat_config_test
