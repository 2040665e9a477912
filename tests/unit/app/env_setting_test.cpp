// config::env_setting: a setting read from its variable alone (the simulate command's
// RATELIMITD_HASH_SECRET), checked by its row as the server checks it: a short secret is
// refused naming the variable and never echoing the value; unset or empty is nothing.
#include "ratelimitd/config/resolve.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace ratelimitd::config {
namespace {

using Env = std::map<std::string, std::string>;

result<std::optional<std::string>> read(const Env& env, std::string_view name = "RATELIMITD_HASH_SECRET") {
    const EnvLookup lookup = [&env](const char* n) -> const char* {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    return env_setting(name, lookup);
}

TEST(EnvSetting, ASecretOfSixteenBytesOrMoreIsTakenAsWritten) {
    const auto got = read({{"RATELIMITD_HASH_SECRET", "0123456789abcdef"}});
    ASSERT_TRUE(got.has_value()) << got.error().detail;
    EXPECT_EQ(*got, std::optional<std::string>("0123456789abcdef"));
}

TEST(EnvSetting, AShortSecretIsRefusedNamingTheVariableNotTheValue) {
    const auto got = read({{"RATELIMITD_HASH_SECRET", "short-secret"}});
    ASSERT_FALSE(got.has_value());
    EXPECT_EQ(got.error().code, errc::invalid_request);
    EXPECT_NE(got.error().detail.find("RATELIMITD_HASH_SECRET"), std::string::npos) << got.error().detail;
    EXPECT_EQ(got.error().detail.find("short-secret"), std::string::npos) << got.error().detail;
}

TEST(EnvSetting, UnsetEmptyOrUnknownIsNothing) {
    const auto unset = read({});
    ASSERT_TRUE(unset.has_value());
    EXPECT_FALSE(unset->has_value());
    const auto empty = read({{"RATELIMITD_HASH_SECRET", ""}});
    ASSERT_TRUE(empty.has_value());
    EXPECT_FALSE(empty->has_value());
    const auto unknown = read({{"RATELIMITD_NO_SUCH", "0123456789abcdef"}}, "RATELIMITD_NO_SUCH");
    ASSERT_TRUE(unknown.has_value());
    EXPECT_FALSE(unknown->has_value());
}

}  // namespace
}  // namespace ratelimitd::config
