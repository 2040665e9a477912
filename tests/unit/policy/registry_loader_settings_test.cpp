// The loader and the settings table: the file's process keys are the table's file keys, in
// the unknown-key message in table order, and a bad value names the file and the key.
#include "ratelimitd/config/resolve.hpp"
#include "ratelimitd/config/setting_table.hpp"
#include "ratelimitd/policy/registry_loader.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace ratelimitd;

const std::string policy = "policies:\n  a: {algorithm: fixed_window, limit: 1, window: 1s}\n";

std::string error_of(const std::string& text) {
    try {
        policy::parse_config(text, "s.yaml");
    } catch (const policy::ConfigError& e) {
        return e.what();
    }
    return "(loaded without error)";
}

TEST(RegistryLoaderSettings, UnknownKeyListsEveryFileKeyOfTheTableInOrder) {
    const std::string msg = error_of(policy + "colour: red\n");
    std::string keys;
    for (const auto key : config::file_setting_keys()) keys += ", " + std::string(key);
    EXPECT_NE(msg.find("hash_secret" + keys + ")"), std::string::npos) << msg;
}

TEST(RegistryLoaderSettings, EveryFileKeyIsReadAndABadValueNamesFileAndKey) {
    for (const auto& row : config::setting_table()) {
        if (row.file_key.empty()) continue;
        const std::string key(row.file_key);
        // A map is no setting's value.
        EXPECT_TRUE(error_of(policy + key + ": {a: 1}\n").starts_with("s.yaml: " + key + ": expected ")) << key;
    }
}

TEST(RegistryLoaderSettings, RegistryErrorsComeBeforeSettingErrors) {
    EXPECT_EQ(error_of("policies: {}\nthreads: 0\n"), "s.yaml: policies: expected at least one policy");
}

}  // namespace
