// Settings: flag > RATELIMITD_* environment > config file > default for the connection and
// memory limits, and a message naming the setting for each bad value.
#include "ratelimitd/app/settings.hpp"
#include "support/resolve_settings.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace ratelimitd::app {
namespace {

using namespace std::chrono_literals;

using test::resolve;

std::string error_of(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
    auto s = resolve(args, env);
    return s ? "(no error)" : s.error().detail;
}

TEST(Settings, ConnectionAndMemoryLimitsHaveDefaults) {
    auto s = resolve({}, {});
    ASSERT_TRUE(s) << s.error().detail;
    EXPECT_EQ(s->max_connections, 10'000u);
    EXPECT_EQ(s->max_requests_per_connection, 10'000u);
    EXPECT_EQ(s->request_timeout, 10s);
    EXPECT_EQ(s->memory_max_keys, 1'000'000u);
    EXPECT_EQ(s->max_held_requests, 1'000u);
}

TEST(Settings, MaxHeldRequestsIsReadAndBounded) {
    auto s = resolve({"--max-held-requests", "2"}, {});
    ASSERT_TRUE(s) << s.error().detail;
    EXPECT_EQ(s->max_held_requests, 2u);
    EXPECT_EQ(error_of({"--max-held-requests", "0"}),
              R"(max-held-requests: expected a whole number 1..1000000, got "0")");
}

TEST(Settings, FlagBeatsEnvironmentBeatsFile) {
    policy::FileSettings file;
    file.max_connections = 100;
    file.max_requests_per_connection = 200;
    file.request_timeout = 3s;
    file.memory_max_keys = 0;

    auto from_file = resolve({}, {}, file);
    ASSERT_TRUE(from_file) << from_file.error().detail;
    EXPECT_EQ(from_file->max_connections, 100u);
    EXPECT_EQ(from_file->max_requests_per_connection, 200u);
    EXPECT_EQ(from_file->request_timeout, 3s);
    EXPECT_EQ(from_file->memory_max_keys, 0u);

    const std::map<std::string, std::string> env{{"RATELIMITD_MAX_CONNECTIONS", "101"},
                                                 {"RATELIMITD_MAX_REQUESTS_PER_CONNECTION", "201"},
                                                 {"RATELIMITD_REQUEST_TIMEOUT", "4s"},
                                                 {"RATELIMITD_MEMORY_MAX_KEYS", "5000"}};
    auto from_env = resolve({}, env, file);
    ASSERT_TRUE(from_env) << from_env.error().detail;
    EXPECT_EQ(from_env->max_connections, 101u);
    EXPECT_EQ(from_env->max_requests_per_connection, 201u);
    EXPECT_EQ(from_env->request_timeout, 4s);
    EXPECT_EQ(from_env->memory_max_keys, 5000u);

    auto from_flags = resolve({"--max-connections", "102", "--max-requests-per-connection=202",
                               "--request-timeout", "500ms", "--memory-max-keys", "0"},
                              env, file);
    ASSERT_TRUE(from_flags) << from_flags.error().detail;
    EXPECT_EQ(from_flags->max_connections, 102u);
    EXPECT_EQ(from_flags->max_requests_per_connection, 202u);
    EXPECT_EQ(from_flags->request_timeout, 500ms);
    EXPECT_EQ(from_flags->memory_max_keys, 0u);
}

TEST(Settings, BadValuesAreRefusedNamingTheSetting) {
    EXPECT_EQ(error_of({"--max-connections", "0"}), R"(max-connections: expected a whole number 1..1000000, got "0")");
    EXPECT_EQ(error_of({"--max-connections", "10k"}),
              R"(max-connections: expected a whole number 1..1000000, got "10k")");
    EXPECT_EQ(error_of({}, {{"RATELIMITD_MAX_REQUESTS_PER_CONNECTION", "-1"}}),
              R"(max-requests-per-connection: expected a whole number 1..1000000000, got "-1")");
    EXPECT_EQ(error_of({"--request-timeout", "10"}),
              R"(request-timeout: expected a duration such as "500ms", "60s" or "1m", got "10")");
    EXPECT_EQ(error_of({"--request-timeout", "50ms"}),
              R"(request-timeout: expected a duration from 100ms to 10m, got "50ms")");
    EXPECT_EQ(error_of({"--store-timeout", "61s"}), R"(store-timeout: expected a duration from 1ms to 1m, got "61s")");
    EXPECT_EQ(error_of({}, {{"RATELIMITD_STORE_TIMEOUT", "106751991167d"}}),
              R"(store-timeout: expected a duration from 1ms to 1m, got "106751991167d")");
    EXPECT_EQ(error_of({"--store-timeout", "1m"}), "(no error)");
    EXPECT_EQ(error_of({"--memory-max-keys", "63"}),
              R"(memory-max-keys: expected 0 (no cap) or a whole number 64..1000000000, got "63")");
    EXPECT_EQ(error_of({"--memory-max-keys", "lots"}),
              R"(memory-max-keys: expected 0 (no cap) or a whole number 64..1000000000, got "lots")");
}

// A flag or a variable takes the schemes the file takes; the URL (it may hold a password) is
// not echoed. They were taken unchecked before, and the store failed to start instead.
TEST(Settings, RedisFlagAndVariableTakeOnlyAStoreScheme) {
    const std::string expected = R"(redis: expected a URL such as "redis://127.0.0.1:6379" (starting with )"
                                 R"("redis://", "redis-sentinel://" or "redis-cluster://", or "rediss" for TLS))";
    EXPECT_EQ(error_of({"--redis", "http://:hunter2@127.0.0.1:6379"}), expected);
    EXPECT_EQ(error_of({}, {{"RATELIMITD_REDIS_URL", "127.0.0.1:6379"}}), expected);
    EXPECT_EQ(error_of({}, {{"RATELIMITD_REDIS", "memcached://h"}}), expected);
    for (const char* url : {"redis://h:6379", "rediss://h", "redis-sentinel://h/m", "rediss-cluster://h:7000"}) {
        EXPECT_EQ(error_of({"--redis", url}), "(no error)") << url;
    }
}

TEST(Settings, HelpNamesEveryRedisUrlScheme) {
    const std::string help = usage();
    for (const char* scheme : {"redis://", "redis-sentinel://", "redis-cluster://"}) {
        EXPECT_NE(help.find(scheme), std::string::npos) << scheme;
    }
}

}  // namespace
}  // namespace ratelimitd::app
