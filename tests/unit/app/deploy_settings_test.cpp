// The settings deployments add: --watch-config on|off and the --threads default.
#include "ratelimitd/app/cpu_count.hpp"
#include "ratelimitd/app/settings.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace ratelimitd::app {
namespace {

result<Settings> resolve(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
    std::vector<const char*> argv{"ratelimitd"};
    for (const auto& a : args) argv.push_back(a.c_str());
    auto cl = parse_command_line(static_cast<int>(argv.size()), argv.data());
    if (!cl) return cl.error();
    const EnvLookup lookup = [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    return resolve_settings(*cl, {}, lookup);
}

TEST(DeploySettings, WatchConfigIsOnUnlessTurnedOff) {
    EXPECT_TRUE(resolve({}, {})->watch_config);
    EXPECT_FALSE(resolve({"--watch-config", "off"}, {})->watch_config);
    EXPECT_FALSE(resolve({}, {{"RATELIMITD_WATCH_CONFIG", "off"}})->watch_config);
    EXPECT_TRUE(resolve({"--watch-config=on"}, {{"RATELIMITD_WATCH_CONFIG", "off"}})->watch_config);
    const auto bad = resolve({"--watch-config", "yes"}, {});
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().detail.find("watch-config: expected on or off"), std::string::npos) << bad.error().detail;
}

TEST(DeploySettings, ThreadsDefaultToTheCpusThisProcessMayUse) {
    EXPECT_EQ(resolve({}, {})->threads, available_cpus());
    EXPECT_EQ(resolve({"--threads", "3"}, {})->threads, 3);
}

TEST(DeploySettings, HelpNamesWatchConfig) {
    EXPECT_NE(std::string(usage()).find("--watch-config on|off"), std::string::npos);
}

}  // namespace
}  // namespace ratelimitd::app
