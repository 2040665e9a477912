// redis_state_layout: the file key, --redis-state-layout and RATELIMITD_REDIS_STATE_LAYOUT, with
// the usual precedence; "string" unless set, and a value other than string or hash refused.
#include "ratelimitd/app/settings.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "support/resolve_settings.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ratelimitd::app {
namespace {

const std::string token_bucket_policies = "policies:\n  p: {algorithm: token_bucket, limit: 1, window: 1s}\n";

using test::resolve;

TEST(RedisStateLayoutSetting, StringUnlessSet) {
    auto s = resolve({}, {});
    ASSERT_TRUE(s) << s.error().detail;
    EXPECT_EQ(s->redis_state_layout, "string");
}

TEST(RedisStateLayoutSetting, FlagBeatsEnvironmentBeatsFile) {
    const auto cfg = policy::parse_config("redis_state_layout: hash\n" + token_bucket_policies, "t.yaml");
    auto from_file = resolve({}, {}, cfg.settings);
    ASSERT_TRUE(from_file) << from_file.error().detail;
    EXPECT_EQ(from_file->redis_state_layout, "hash");
    auto from_env = resolve({}, {{"RATELIMITD_REDIS_STATE_LAYOUT", "string"}}, cfg.settings);
    ASSERT_TRUE(from_env) << from_env.error().detail;
    EXPECT_EQ(from_env->redis_state_layout, "string");
    auto from_flag = resolve({"--redis-state-layout", "hash"}, {{"RATELIMITD_REDIS_STATE_LAYOUT", "string"}});
    ASSERT_TRUE(from_flag) << from_flag.error().detail;
    EXPECT_EQ(from_flag->redis_state_layout, "hash");
}

TEST(RedisStateLayoutSetting, OtherValuesAreRefusedNamingTheSetting) {
    auto s = resolve({"--redis-state-layout", "json"}, {});
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().detail.find("redis-state-layout"), std::string::npos) << s.error().detail;
    EXPECT_ANY_THROW(policy::parse_config("redis_state_layout: hashes\n" + token_bucket_policies, "t.yaml"));
}

}  // namespace
}  // namespace ratelimitd::app
