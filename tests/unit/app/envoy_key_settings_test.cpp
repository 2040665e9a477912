// envoy_key_layout, envoy_key_prefix and envoy_expiration_jitter: the names ERL mode maps
// envoyproxy/ratelimit's environment onto (CACHE_KEY_PREFIX, EXPIRATION_JITTER_MAX_SECONDS),
// with the usual precedence; the prefix and the jitter only with its layout.
#include "ratelimitd/app/settings.hpp"
#include "support/resolve_settings.hpp"
#include "ratelimitd/policy/registry_loader.hpp"

#include "unit/app/one_policy.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ratelimitd::app {
namespace {

using ratelimitd::test::policies;

using namespace std::chrono_literals;
using test::resolve;


TEST(EnvoyKeySettings, DefaultIsRatelimitdsOwnLayout) {
    auto s = resolve({}, {});
    ASSERT_TRUE(s) << s.error().detail;
    EXPECT_EQ(s->envoy_key_layout, "ratelimitd");
    EXPECT_EQ(s->envoy_key_prefix, "");
    EXPECT_EQ(s->envoy_expiration_jitter, 0ms);
    EXPECT_FALSE(envoy_keys(*s).erl);
}

TEST(EnvoyKeySettings, TheVariablesAndFlagsTakeEnvoyproxyRatelimitsValues) {
    auto s = resolve({"--envoy-expiration-jitter", "300s"},
                     {{"RATELIMITD_ENVOY_KEY_LAYOUT", "envoyproxy-ratelimit"},
                      {"RATELIMITD_ENVOY_KEY_PREFIX", "ratelimit_"},
                      {"RATELIMITD_ENVOY_EXPIRATION_JITTER", "0"}});
    ASSERT_TRUE(s) << s.error().detail;
    const auto keys = envoy_keys(*s);
    EXPECT_TRUE(keys.erl);
    EXPECT_EQ(keys.prefix, "ratelimit_");
    EXPECT_EQ(keys.jitter, 300s);
    // EXPIRATION_JITTER_MAX_SECONDS=0 is its "no jitter": 0, 0s accepted (no other duration).
    for (const char* zero : {"0", "0s", "00ms"}) {
        auto z = resolve({"--envoy-key-layout", "envoyproxy-ratelimit", "--envoy-expiration-jitter", zero}, {});
        ASSERT_TRUE(z) << zero << ": " << z.error().detail;
        EXPECT_EQ(z->envoy_expiration_jitter, 0ms);
    }
    const auto cfg = policy::parse_config("envoy_key_layout: envoyproxy-ratelimit\nenvoy_key_prefix: p_\n"
                                          "envoy_expiration_jitter: 0\n" + policies, "test.yaml");
    auto f = resolve({}, {}, cfg.settings);
    ASSERT_TRUE(f) << f.error().detail;
    EXPECT_EQ(f->envoy_key_prefix, "p_");
}

TEST(EnvoyKeySettings, BadValuesAndMisplacedOnesAreRefusedNamingTheSetting) {
    auto layout = resolve({"--envoy-key-layout", "erl"}, {});
    ASSERT_FALSE(layout);
    EXPECT_NE(layout.error().detail.find("envoy-key-layout"), std::string::npos) << layout.error().detail;
    auto prefix = resolve({"--envoy-key-prefix", "p_"}, {});
    ASSERT_FALSE(prefix);
    EXPECT_NE(prefix.error().detail.find("envoy_key_prefix: only with envoy_key_layout: envoyproxy-ratelimit"),
              std::string::npos)
        << prefix.error().detail;
    auto jitter = resolve({"--envoy-expiration-jitter", "10s"}, {});
    ASSERT_FALSE(jitter);
    EXPECT_NE(jitter.error().detail.find("envoy_expiration_jitter"), std::string::npos) << jitter.error().detail;
    auto fraction = resolve({"--envoy-key-layout", "envoyproxy-ratelimit", "--envoy-expiration-jitter", "500ms"}, {});
    ASSERT_FALSE(fraction) << "below a second: its seconds cannot say it";
    auto too_long = resolve({"--envoy-key-layout", "envoyproxy-ratelimit", "--envoy-expiration-jitter", "2d"}, {});
    ASSERT_FALSE(too_long);
}

}  // namespace
}  // namespace ratelimitd::app
