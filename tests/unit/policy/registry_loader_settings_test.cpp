// The loader and the settings table: the file's process keys are the table's file keys, in
// the unknown-key message in table order, and a bad value names the file and the key.
#include "ratelimitd/config/resolve.hpp"
#include "ratelimitd/config/setting_table.hpp"
#include "ratelimitd/policy/registry_loader.hpp"

#include "unit/policy/config_refusals.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

using ratelimitd::test::parse_error_of;

using namespace ratelimitd;

const std::string policy = "policies:\n  a: {algorithm: fixed_window, limit: 1, window: 1s}\n";

TEST(RegistryLoaderSettings, UnknownKeyListsEveryFileKeyOfTheTableInOrder) {
    const std::string msg = parse_error_of(policy + "colour: red\n", "s.yaml");
    std::string keys;
    for (const auto key : config::file_setting_keys()) keys += ", " + std::string(key);
    EXPECT_NE(msg.find("hash_secret" + keys + ")"), std::string::npos) << msg;
}

TEST(RegistryLoaderSettings, EveryFileKeyIsReadAndABadValueNamesFileAndKey) {
    for (const auto& row : config::setting_table()) {
        if (row.file_key.empty()) continue;
        const std::string key(row.file_key);
        // A map is no setting's value.
        EXPECT_TRUE(parse_error_of(policy + key + ": {a: 1}\n", "s.yaml").starts_with("s.yaml: " + key + ": expected ")) << key;
    }
}

TEST(RegistryLoaderSettings, RegistryErrorsComeBeforeSettingErrors) {
    EXPECT_EQ(parse_error_of("policies: {}\nthreads: 0\n", "s.yaml"), "s.yaml: policies: expected at least one policy");
}

}  // namespace

namespace {

// YAML 1.2 floats are numbers, as in JSON: `access_log_sample: 0.5` was read as the text "0.5"
// and refused, while the same file in JSON loaded.
TEST(RegistryLoaderSettings, YamlFloatsAreNumbers) {
    for (const auto& [text, value] : std::vector<std::pair<std::string, double>>{
             {"0.5", 0.5}, {"1.0", 1.0}, {".25", 0.25}, {"+0.75", 0.75}, {"5e-1", 0.5}, {"1.", 1.0}, {"0", 0.0}}) {
        const auto cfg = policy::parse_config(policy + "access_log_sample: " + text + "\n", "s.yaml");
        ASSERT_TRUE(cfg.settings.access_log_sample.has_value()) << text;
        EXPECT_DOUBLE_EQ(*cfg.settings.access_log_sample, value) << text;
    }
    // Quoted stays text; not-quite-numbers stay text; a float is still no integer.
    EXPECT_EQ(parse_error_of(policy + "access_log_sample: \"0.5\"\n", "s.yaml"),
              "s.yaml: access_log_sample: expected a number from 0 to 1, got \"0.5\"");
    for (const char* text : {"0.5.1", "1e", ".", "+", "0x1p-1", ".inf", "1_000.5"}) {
        EXPECT_TRUE(parse_error_of(policy + "access_log_sample: " + text + "\n", "s.yaml").starts_with("s.yaml: access_log_sample: expected"))
            << text;
    }
    EXPECT_EQ(parse_error_of("policies:\n  a: {algorithm: fixed_window, limit: 1.5, window: 1s}\n", "s.yaml"),
              "s.yaml: policies.a.limit: expected an integer 1..1000000000, got 1.5");
}

}  // namespace
