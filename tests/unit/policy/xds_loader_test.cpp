// With xds_server the Envoy domains come from the control plane: the file may hold no policies
// and no domains, and a second source of domains beside it is refused. Without it, nothing changes.
#include "ratelimitd/policy/registry_loader.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::policy {
namespace {

TEST(XdsLoader, AFileWithoutRulesLoadsOnlyWhenTheDomainsComeFromXds) {
    EXPECT_THROW(parse_config("prefix: rl\n", "x.yaml"), ConfigError);
    const auto by_option = parse_config("prefix: rl\n", "x.yaml", {.envoy_rules_from_xds = true});
    EXPECT_TRUE(by_option.registry.policies.empty());
    EXPECT_EQ(by_option.registry.domains, nullptr);
    const auto by_key = parse_config("xds_server: 127.0.0.1:18000\n", "x.yaml");
    EXPECT_EQ(by_key.settings.xds_server, "127.0.0.1:18000");
    EXPECT_TRUE(by_key.registry.policies.empty());
}

TEST(XdsLoader, PoliciesStillLoadBesideXds) {
    const auto cfg = parse_config("policies:\n  p: {algorithm: fixed_window, limit: 1, window: 1s}\n", "x.yaml",
                                  {.envoy_rules_from_xds = true});
    EXPECT_NE(cfg.registry.find("p"), nullptr);
}

TEST(XdsLoader, DomainsOrEnvoyConfigBesideXdsAreRefusedByName) {
    try {
        (void)parse_config("xds_server: 127.0.0.1:18000\ndomains: []\n", "x.yaml");
        FAIL() << "accepted two sources of domains";
    } catch (const ConfigError& e) {
        EXPECT_STREQ(e.what(), "x.yaml: domains: not allowed with xds_server (the Envoy domains come from the control plane)");
    }
    EXPECT_THROW(parse_config("envoy_config: /nowhere\n", "x.yaml", {.envoy_rules_from_xds = true}), ConfigError);
}

}  // namespace
}  // namespace ratelimitd::policy
