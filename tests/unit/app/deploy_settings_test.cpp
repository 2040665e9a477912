// The settings deployments add: --watch-config on|off and the --threads default.
#include "ratelimitd/app/cpu_count.hpp"
#include "ratelimitd/app/settings.hpp"
#include "support/resolve_settings.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace ratelimitd::app {
namespace {

using test::resolve;

TEST(DeploySettings, WatchConfigIsOnUnlessTurnedOff) {
    EXPECT_TRUE(resolve({}, {})->watch_config);
    EXPECT_FALSE(resolve({"--watch-config", "off"}, {})->watch_config);
    EXPECT_FALSE(resolve({}, {{"RATELIMITD_WATCH_CONFIG", "off"}})->watch_config);
    EXPECT_TRUE(resolve({"--watch-config=on"}, {{"RATELIMITD_WATCH_CONFIG", "off"}})->watch_config);
    const auto bad = resolve({"--watch-config", "maybe"}, {});
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
