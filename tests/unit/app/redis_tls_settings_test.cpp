// The redis_tls_* settings: file keys, --redis-tls-* flags and RATELIMITD_REDIS_TLS_* variables,
// with the usual precedence, and a bad on/off value refused naming the setting.
#include "ratelimitd/app/settings.hpp"
#include "support/resolve_settings.hpp"
#include "ratelimitd/policy/registry_loader.hpp"

#include "unit/app/one_policy.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace ratelimitd::app {
namespace {

using ratelimitd::test::policies;


using test::resolve;

TEST(RedisTlsSettings, DefaultsVerifyWithTheSystemStore) {
    auto s = resolve({}, {});
    ASSERT_TRUE(s) << s.error().detail;
    EXPECT_EQ(s->redis_tls_ca, "");
    EXPECT_EQ(s->redis_tls_cert, "");
    EXPECT_EQ(s->redis_tls_key, "");
    EXPECT_EQ(s->redis_tls_server_name, "");
    EXPECT_FALSE(s->redis_tls_insecure_skip_verify);
}

TEST(RedisTlsSettings, FlagBeatsEnvironmentBeatsFile) {
    const auto cfg = policy::parse_config("redis_tls_ca: /file/ca.pem\nredis_tls_cert: /file/c.pem\n"
                                          "redis_tls_key: /file/k.pem\nredis_tls_server_name: file.example\n"
                                          "redis_tls_insecure_skip_verify: true\n" + policies + "",
                                          "test.yaml");
    auto s = resolve({"--redis-tls-ca", "/flag/ca.pem", "--redis-tls-insecure-skip-verify=off"},
                     {{"RATELIMITD_REDIS_TLS_CA", "/env/ca.pem"}, {"RATELIMITD_REDIS_TLS_CERT", "/env/c.pem"}},
                     cfg.settings);
    ASSERT_TRUE(s) << s.error().detail;
    EXPECT_EQ(s->redis_tls_ca, "/flag/ca.pem");
    EXPECT_EQ(s->redis_tls_cert, "/env/c.pem");
    EXPECT_EQ(s->redis_tls_key, "/file/k.pem");
    EXPECT_EQ(s->redis_tls_server_name, "file.example");
    EXPECT_FALSE(s->redis_tls_insecure_skip_verify);
    auto from_file = resolve({}, {}, cfg.settings);
    ASSERT_TRUE(from_file);
    EXPECT_TRUE(from_file->redis_tls_insecure_skip_verify);
}

TEST(RedisTlsSettings, BadValuesAreRefusedNamingTheSetting) {
    auto s = resolve({"--redis-tls-insecure-skip-verify", "maybe"}, {});
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().detail.find("redis-tls-insecure-skip-verify: expected on or off"), std::string::npos);
    EXPECT_ANY_THROW(policy::parse_config("redis_tls_insecure_skip_verify: 1\n" + policies + "", "t.yaml"));
    EXPECT_ANY_THROW(policy::parse_config("redis_tls_ca: [a]\n" + policies + "", "t.yaml"));
}

TEST(RedisTlsSettings, FileAcceptsTheTlsSchemes) {
    for (const char* url : {"rediss://h:6380", "rediss-sentinel://h/m", "rediss-cluster://h:7000"}) {
        const auto cfg = policy::parse_config(std::string("redis: \"") + url + "\"\n" + policies + "", "t.yaml");
        EXPECT_EQ(cfg.settings.redis, url);
    }
}

TEST(RedisTlsSettings, HelpNamesTheTlsSchemesAndFlags) {
    const std::string help = usage();
    EXPECT_NE(help.find("rediss://"), std::string::npos);
    EXPECT_NE(help.find("--redis-tls-server-name"), std::string::npos);
}

}  // namespace
}  // namespace ratelimitd::app
