// Every on/off setting takes the words people write for a switch (on/off, yes/no, true/false,
// in any case) from a flag, a variable and the file, where a YAML boolean counts too; anything
// else is refused naming the setting. A refused `on` once stopped a config the docs showed.
#include "ratelimitd/config/resolve.hpp"
#include "ratelimitd/config/setting_table.hpp"

#include "unit/app/precedence.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace ratelimitd::config {
namespace {

using ratelimitd::test::precedence;

using Env = std::map<std::string, std::string>;

const std::vector<std::string> on_words{"on", "ON", "On", "yes", "Yes", "true", "TRUE"};
const std::vector<std::string> off_words{"off", "OFF", "no", "No", "false", "False"};

// True when `got` resolved to exactly `want` (result<Settings> has no printer for EXPECT_EQ).
bool resolves_to(const result<Settings>& got, const Settings& want) { return got && *got == want; }

std::vector<const SettingRow*> switch_rows() {
    std::vector<const SettingRow*> out;
    for (const auto& row : setting_table()) {
        if (row.type == SettingType::on_off) out.push_back(&row);
    }
    return out;
}

TEST(SwitchSettings, TheTableHasSwitchesInTheFileAndOutOfIt) {
    bool in_file = false, text_only = false;
    for (const auto* row : switch_rows()) (row->file_key.empty() ? text_only : in_file) = true;
    EXPECT_TRUE(in_file);
    EXPECT_TRUE(text_only);
}

TEST(SwitchSettings, FlagsAndVariablesTakeEverySpelling) {
    for (const auto* row : switch_rows()) {
        const std::string flag = "--" + std::string(row->flag);
        const auto on = precedence({flag, "on"}, {});
        const auto off = precedence({flag, "off"}, {});
        ASSERT_TRUE(on && off) << flag;
        ASSERT_NE(*on, *off) << flag;
        for (const auto& word : on_words) {
            EXPECT_TRUE(resolves_to(precedence({flag, word}, {}), *on)) << flag << " " << word;
            EXPECT_TRUE(resolves_to(precedence({}, {{std::string(row->env), word}}), *on)) << row->env << "=" << word;
        }
        for (const auto& word : off_words) {
            EXPECT_TRUE(resolves_to(precedence({flag, word}, {}), *off)) << flag << " " << word;
            EXPECT_TRUE(resolves_to(precedence({}, {{std::string(row->env), word}}), *off)) << row->env << "=" << word;
        }
    }
}

TEST(SwitchSettings, TheFileTakesEverySpellingAndYamlBooleans) {
    for (const auto* row : switch_rows()) {
        if (row->file_key.empty()) continue;
        const std::string key(row->file_key);
        const auto on = read_file_settings(ConfigTree{{key, true}});
        const auto off = read_file_settings(ConfigTree{{key, false}});
        ASSERT_TRUE(on && off) << key;
        ASSERT_NE(*on, *off) << key;
        for (const auto& word : on_words) {
            const auto read = read_file_settings(ConfigTree{{key, word}});
            ASSERT_TRUE(read) << key << ": " << word << ": " << read.error().detail;
            EXPECT_EQ(*read, *on) << key << ": " << word;
        }
        for (const auto& word : off_words) {
            const auto read = read_file_settings(ConfigTree{{key, word}});
            ASSERT_TRUE(read) << key << ": " << word << ": " << read.error().detail;
            EXPECT_EQ(*read, *off) << key << ": " << word;
        }
    }
}

TEST(SwitchSettings, OtherWordsAreRefusedNamingTheSetting) {
    const auto flag = precedence({"--coalescing", "maybe"}, {});
    ASSERT_FALSE(flag);
    EXPECT_EQ(flag.error().detail, "coalescing: expected on or off (also yes/no, true/false), got \"maybe\"");
    const auto env = precedence({}, {{"RATELIMITD_DENIAL_CACHE", "1"}});
    ASSERT_FALSE(env);
    EXPECT_NE(env.error().detail.find("denial-cache: expected on or off"), std::string::npos) << env.error().detail;
    for (const ConfigTree& value : {ConfigTree("enabled"), ConfigTree(1), ConfigTree(""), ConfigTree::array()}) {
        const auto file = read_file_settings(ConfigTree{{"grpc_x_ratelimit_headers", value}});
        ASSERT_FALSE(file) << value.dump();
        EXPECT_TRUE(file.error().detail.starts_with(
            "grpc_x_ratelimit_headers: expected on or off (also yes/no, true/false), got "))
            << file.error().detail;
    }
}

}  // namespace
}  // namespace ratelimitd::config
