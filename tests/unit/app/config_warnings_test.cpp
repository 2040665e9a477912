// The warnings of a config that is valid but limits less than it seems to: routes that leave
// /v1/auth requests unlimited, a hashed identity with no shared secret, a gRPC server with no
// Envoy domain; and none otherwise.
#include "ratelimitd/app/config_warnings.hpp"

#include "ratelimitd/policy/registry_loader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ratelimitd::app {
namespace {

constexpr const char* api_policies = "policies:\n  api: { algorithm: fixed_window, limit: 5, window: 1m }\n";

std::vector<std::string> warnings_of(const std::string& yaml, WarningContext context = {}) {
    return config_warnings(policy::parse_config(std::string(api_policies) + yaml, "w.yaml").registry, context);
}

bool mentions(const std::vector<std::string>& lines, std::string_view what) {
    for (const auto& l : lines) {
        if (l.find(what) != std::string::npos) return true;
    }
    return false;
}

TEST(ConfigWarnings, RoutesWithoutADefaultPolicyLeaveUnmatchedAuthRequestsUnlimited) {
    const auto lines = warnings_of("routes:\n  - { path: /api/*, policy: api }\n");
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_TRUE(lines[0].starts_with("routes are set but no default_policy: a /v1/auth request no route matches "
                                     "is answered 200 without any limit"))
        << lines[0];
    EXPECT_TRUE(mentions(lines, "ratelimitd_auth_unmatched_total"));
}

TEST(ConfigWarnings, ADefaultPolicyOrACatchAllRouteSilencesIt) {
    EXPECT_TRUE(warnings_of("default_policy: api\nroutes:\n  - { path: /api/*, policy: api }\n").empty());
    EXPECT_TRUE(warnings_of("routes:\n  - { path: /api/*, policy: api }\n  - { path: /*, policy: none }\n").empty());
    EXPECT_TRUE(warnings_of("").empty());  // no routes: /v1/auth is not in use
    // A catch-all for one method still leaves the others unmatched.
    EXPECT_EQ(warnings_of("routes:\n  - { method: GET, path: /*, policy: api }\n").size(), 1u);
}

TEST(ConfigWarnings, AHashedIdentityNeedsASecretFromTheFileOrTheEnvironment) {
    const std::string hashed = "identity:\n  - { header: X-Api-Key, hash: true }\n";
    const auto lines = warnings_of(hashed);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_TRUE(lines[0].starts_with("no hash_secret in the config and no RATELIMITD_HASH_SECRET")) << lines[0];
    EXPECT_TRUE(warnings_of(hashed, {.secret_from_environment = true}).empty());
    EXPECT_TRUE(warnings_of(hashed + "hash_secret: \"0123456789abcdef0123\"\n").empty());
    EXPECT_TRUE(warnings_of("identity:\n  - { header: X-Api-Key }\n").empty());  // nothing hashed
}

TEST(ConfigWarnings, TheGrpcServerWithoutEnvoyDomainsLimitsNothing) {
    const auto lines = warnings_of("", {.grpc_serving = true});
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_TRUE(lines[0].starts_with("grpc_listen is set but the config defines no Envoy domain")) << lines[0];
    EXPECT_TRUE(warnings_of("", {}).empty());  // no gRPC server: no Envoy to ask
    const std::string domain = "domains:\n  - domain: edge\n    descriptors:\n      - key: remote_address\n"
                               "        rate_limit: {unit: second, requests_per_unit: 10}\n";
    EXPECT_TRUE(warnings_of(domain, {.grpc_serving = true}).empty());
    // xds_server: the domains come from the control plane, none in the file is expected.
    EXPECT_TRUE(warnings_of("", {.grpc_serving = true, .domains_from_xds = true}).empty());
}

TEST(ConfigWarnings, BothComeInAFixedOrder) {
    const auto lines =
        warnings_of("identity:\n  - { header: X-Api-Key, hash: true }\nroutes:\n  - { path: /api/*, policy: api }\n");
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_TRUE(lines[0].starts_with("routes are set")) << lines[0];
    EXPECT_TRUE(lines[1].starts_with("no hash_secret")) << lines[1];
}

}  // namespace
}  // namespace ratelimitd::app
