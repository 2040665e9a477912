// The ERL table holds exactly envoyproxy/ratelimit's variables, every value it refuses names its
// variable, and docs/envoy.md shows the same rows.
#include "erl_env_fixture.hpp"

#include "ratelimitd/erl/erl_environment.hpp"
#include "ratelimitd/erl/erl_variables.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ratelimitd::erl {
namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::string> settings_go_variables() {
    std::vector<std::string> names;
    std::istringstream in(read_text(std::string(RATELIMITD_TEST_DATA_DIR) + "/erl_settings.txt"));
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.front() != '#') names.push_back(line);
    }
    return names;
}

TEST(ErlVariables, TheTableHoldsExactlyTheVariablesOfSettingsGoInItsOrder) {
    const auto expected = settings_go_variables();
    ASSERT_EQ(expected.size(), 114u) << "tests/data/erl_settings.txt not read";
    std::vector<std::string> rows;
    for (const auto& row : erl_variables()) rows.emplace_back(row.name);
    EXPECT_EQ(rows, expected);
    for (const auto& row : erl_variables()) {
        EXPECT_FALSE(row.ours.empty()) << row.name << " says what ratelimitd does with it";
        if (row.use == ErlUse::refused) {
            EXPECT_FALSE(row.refused_example.empty()) << row.name;
        }
    }
}

// Every value a row refuses stops the start, naming the variable; the rest of the env is valid.
TEST(ErlVariables, EachRefusalNamesItsVariable) {
    int refusals = 0;
    for (const auto& row : erl_variables()) {
        if (row.refused_example.empty()) continue;
        SCOPED_TRACE(std::string(row.name));
        auto vars = testing::deployment_env();
        vars[std::string(row.name)] = std::string(row.refused_example);
        const auto mode = map_erl_environment(testing::lookup(vars), "/");
        ASSERT_FALSE(mode.has_value());
        EXPECT_EQ(mode.error().detail.rfind(std::string(row.name) + ": ", 0), 0u) << mode.error().detail;
        ++refusals;
    }
    // QUOTA_MODE, the three LIMIT_*_HEADER names and REDIS_PERSECOND are mapped now, no longer
    // refused.
    EXPECT_GE(refusals, 11);
}

TEST(ErlVariables, ABadlyTypedValueIsRefusedNamingTheVariable) {
    for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
             {"PORT", "eighty"}, {"USE_STATSD", "yes"}, {"GRPC_MAX_CONNECTION_AGE", "24"}, {"NEAR_LIMIT_RATIO", "x"}}) {
        auto vars = testing::deployment_env();
        vars[name] = value;
        const auto mode = map_erl_environment(testing::lookup(vars), "/");
        ASSERT_FALSE(mode.has_value()) << name;
        EXPECT_EQ(mode.error().detail.rfind(name + ": expected ", 0), 0u) << mode.error().detail;
    }
}

// docs/envoy.md, "Replacing envoyproxy/ratelimit": one row per variable, with the code's use.
TEST(ErlVariables, TheDocTableShowsEveryRowWithItsUse) {
    const std::string doc = read_text(std::string(RATELIMITD_TEST_DATA_DIR) + "/../../docs/envoy.md");
    const auto section = doc.find("## Replacing envoyproxy/ratelimit");
    ASSERT_NE(section, std::string::npos);
    const std::string text = doc.substr(section, doc.find("\n## ", section + 1) - section);
    std::set<std::string> documented;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("| `", 0) != 0) continue;
        const auto end = line.find('`', 3);
        const std::string name = line.substr(3, end - 3);
        const ErlVariable* row = find_erl_variable(name);
        if (row == nullptr) continue;  // other tables of the section
        documented.insert(name);
        EXPECT_NE(line.find("| " + std::string(to_string(row->use)) + " |"), std::string::npos) << line;
        EXPECT_NE(line.find(std::string(row->ours)), std::string::npos) << line;
    }
    for (const auto& row : erl_variables()) {
        EXPECT_TRUE(documented.count(std::string(row.name))) << row.name;
    }
}

}  // namespace
}  // namespace ratelimitd::erl
