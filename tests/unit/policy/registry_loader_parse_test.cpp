// parse_config: how values are read (prefixes, paths, YAML scalars, bounds, escaping), each
// with its exact message where one is refused.
#include "ratelimitd/policy/registry_loader.hpp"

#include "unit/policy/config_refusals.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using ratelimitd::test::parse_error_of;

using namespace ratelimitd::policy;
using namespace std::chrono_literals;

TEST(ParseConfig, ClientIpPrefixesDefaultTo32And64) {
    const Config c = parse_config("policies:\n  a: {algorithm: token_bucket, limit: 1, window: 1s}\n"
                                  "identity:\n  - {client_ip: true}\n",
                                  "p.yaml");
    EXPECT_EQ(c.registry.identity[0].prefixes.ipv4, 32);
    EXPECT_EQ(c.registry.identity[0].prefixes.ipv6, 64);
    EXPECT_EQ(c.registry.client_ip.ipv6, 64);
    const Config none = parse_config("policies:\n  a: {algorithm: token_bucket, limit: 1, window: 1s}\n", "p.yaml");
    EXPECT_EQ(none.registry.client_ip.ipv4, 32);  // no identity list: the fallback's defaults
    EXPECT_EQ(none.registry.client_ip.ipv6, 64);
}

TEST(ParseConfig, ClientIpPrefixesAreReadPerSource) {
    const Config c = parse_config(R"(
policies:
  a: {algorithm: token_bucket, limit: 1, window: 1s}
identity:
  - {client_ip: true, name: exact_ip, ipv4_prefix: 32, ipv6_prefix: 128}
  - {client_ip: true, ipv4_prefix: 24, ipv6_prefix: 48}
)",
                                  "p.yaml");
    EXPECT_EQ(c.registry.identity[0].prefixes.ipv6, 128);
    EXPECT_EQ(c.registry.identity[1].prefixes.ipv4, 24);
    EXPECT_EQ(c.registry.identity[1].prefixes.ipv6, 48);
    // The source named client_ip sets what route limits naming client_ip and the fallback use.
    EXPECT_EQ(c.registry.client_ip.ipv4, 24);
    EXPECT_EQ(c.registry.client_ip.ipv6, 48);
    for (const char* edge : {"ipv6_prefix: 32", "ipv6_prefix: 128", "ipv4_prefix: 16", "ipv4_prefix: 32"}) {
        EXPECT_NO_THROW(parse_config(std::string("policies:\n  a: {algorithm: token_bucket, limit: 1, window: 1s}\n"
                                                 "identity:\n  - {client_ip: true, ") + edge + "}\n",
                                     "p.yaml"))
            << edge;
    }
}

TEST(ParseConfig, CaseInsensitiveIsPerRouteWithATopLevelDefault) {
    const std::string policies = "policies:\n  a: {algorithm: token_bucket, limit: 1, window: 1s}\n";
    const Config c = parse_config(policies + "routes:\n  - {path: /a, policy: a}\n"
                                             "  - {path: /B, policy: a, case_insensitive: true}\n",
                                  "p.yaml");
    EXPECT_FALSE(c.registry.routes[0].case_insensitive);
    EXPECT_TRUE(c.registry.routes[1].case_insensitive);
    const Config d = parse_config(policies + "case_insensitive: true\nroutes:\n  - {path: /a, policy: a}\n"
                                             "  - {path: /b, policy: a, case_insensitive: false}\n",
                                  "p.yaml");
    EXPECT_TRUE(d.registry.routes[0].case_insensitive);
    EXPECT_FALSE(d.registry.routes[1].case_insensitive);
}

TEST(ParseConfig, RoutePathsMustBeNormalised) {
    const std::string policies = "policies:\n  a: {algorithm: token_bucket, limit: 1, window: 1s}\n";
    for (const char* ok : {"/", "/*", "/v1/*", "/login", "/login/", "/a,b=@:~", "/caf%C3%A9", "/v1*"}) {
        EXPECT_NO_THROW(parse_config(policies + "routes:\n  - {path: \"" + ok + "\", policy: a}\n", "p.yaml"))
            << ok;
    }
    EXPECT_EQ(parse_error_of(policies + "routes:\n  - {path: \"/%6cogin\", policy: a}\n", "p.yaml"),
              R"(p.yaml: routes[0].path: expected a normalised path (write "/login"), got "/%6cogin")");
    EXPECT_EQ(parse_error_of(policies + "routes:\n  - {path: \"/login;x\", policy: a}\n", "p.yaml"),
              R"(p.yaml: routes[0].path: expected a normalised path (write "/login"), got "/login;x")");
}

TEST(ParseConfig, ARouteScopeWithBracesIsAllowedItsKeyIsEscaped) {
    const Config c = parse_config("policies:\n  a: {algorithm: token_bucket, limit: 1, window: 1s}\n"
                                  "routes:\n  - {path: /a, policy: a, scope: \"{x}\"}\n",
                                  "p.yaml");
    EXPECT_EQ(c.registry.routes[0].scope, "{x}");
}

TEST(ParseConfig, PlainYamlScalarsBecomeTypedValues) {
    const Config c = parse_config(R"(
policies:
  a: {algorithm: token_bucket, limit: +10, window: 1s, burst: 010}
identity:
  - {header: X-Key, hash: True}
auth: {deny_status: 403}
)",
                                  "inline.yaml");
    EXPECT_EQ(c.registry.find("a")->limit, 10);
    EXPECT_EQ(c.registry.find("a")->burst, 10);
    EXPECT_TRUE(c.registry.identity[0].hash);
}

TEST(ParseConfig, QuotedYamlScalarsStayText) {
    EXPECT_EQ(parse_error_of("policies:\n  a: {algorithm: token_bucket, limit: 1, window: 1s}\n"
                             "identity:\n  - {header: X-Key, hash: \"true\"}\n",
                             "q.yaml"),
              R"(q.yaml: identity[0].hash: expected true or false, got "true")");
    EXPECT_EQ(parse_error_of("policies:\n  a: {algorithm: token_bucket, limit: 1, window: 1s}\n"
                             "routes:\n  - {path: /x, policy: a, scope: 123}\n",
                             "q.yaml"),
              "q.yaml: routes[0].scope: expected a scope such as POST_/v1/exports, got 123");
}

TEST(ParseConfig, ExtensionIsCaseInsensitiveAndYmlWorks) {
    const std::string text = "policies:\n  a: {algorithm: fixed_window, limit: 1, window: 1s}\n";
    EXPECT_NO_THROW(parse_config(text, "x.YAML"));
    EXPECT_NO_THROW(parse_config(text, "x.yml"));
    EXPECT_NO_THROW(parse_config(
        R"({"policies": {"a": {"algorithm": "fixed_window", "limit": 1, "window": "1s"}}})",
        "dir.d/x.JSON"));
}

TEST(ParseConfig, HugeIntegersAreOutOfRange) {
    EXPECT_EQ(
        parse_error_of(
            "policies:\n  a: {algorithm: fixed_window, limit: 99999999999999999999, window: 1s}\n",
            "big.yaml"),
        R"(big.yaml: policies.a.limit: expected an integer 1..1000000000, got "99999999999999999999")");
    EXPECT_EQ(
        parse_error_of(
            R"({"policies": {"a": {"algorithm": "fixed_window", "limit": 18446744073709551615,
                                 "window": "1s"}}})",
            "big.json"),
        "big.json: policies.a.limit: expected an integer 1..1000000000, got 18446744073709551615");
    EXPECT_EQ(
        parse_error_of(
            R"({"policies": {"a": {"algorithm": "fixed_window", "limit": 5.0, "window": "1s"}}})",
            "float.json"),
        "float.json: policies.a.limit: expected an integer 1..1000000000, got 5.0");
}

// Issue 45: a 15 MiB list of numbers took 3.7 GB and 49 s of yaml-cpp nodes before the values
// bound refused it. Counted from the parser's events first, it is refused before any node is
// built; the same message names the same bound.
TEST(ParseConfig, AYamlFileOfTooManyValuesIsRefusedBeforeItsTreeIsBuilt) {
    std::string text = "policies:\n  a: {algorithm: fixed_window, limit: 1, window: 1s}\nx: [";
    for (int i = 0; i < 2'100'000; ++i) text += "1,";
    text += "1]\n";
    const std::string error = parse_error_of(text, "many.yaml");
    EXPECT_TRUE(error.starts_with("many.yaml: line 3, column ")) << error;
    EXPECT_TRUE(error.ends_with(": more than 1000000 values (the bound of a config file, YAML aliases expanded)"))
        << error;
}

// Map members are appended, not looked up first (a lookup per member made 200,000 policies take
// minutes): 20,000 policies all load.
TEST(ParseConfig, ManyPoliciesAllLoad) {
    std::string text = "policies:\n";
    for (int i = 0; i < 20'000; ++i) text += "  p" + std::to_string(i) + ": {algorithm: fixed_window, limit: 1, window: 1s}\n";
    const auto config = parse_config(text, "many.yaml");
    EXPECT_EQ(config.registry.policies.size(), 20'000u);
    EXPECT_EQ(config.registry.policies.count("p19999"), 1u);
}

TEST(ParseConfig, SecretsAreNeverEchoed) {
    const std::string base = "policies:\n  a: {algorithm: fixed_window, limit: 1, window: 1s}\n";
    EXPECT_EQ(parse_error_of(base + "hash_secret: 12345678\n", "s.yaml"),
              "s.yaml: hash_secret: expected a string of at least 16 bytes, got an integer");
    const std::string msg = parse_error_of(base + "redis: \"http://:hunter2@db:6379\"\n", "s.yaml");
    EXPECT_EQ(msg.find("hunter2"), std::string::npos) << msg;
}

TEST(ParseConfig, ControlBytesInKeysAreEscaped) {
    EXPECT_EQ(
        parse_error_of("{\"policies\": {\"a\\u0007\": {}}}", "k.json"),
        R"(k.json: policies.a\x07: expected a policy name of 1..64 bytes of A-Z, a-z, 0-9, '.', '_' or '-')");
}

TEST(ParseConfig, JsonDuplicateKeyInsideAList) {
    EXPECT_EQ(parse_error_of(
                  R"({"policies": {"a": {"algorithm": "fixed_window", "limit": 1, "window": "1s"}},
                                 "identity": [{"client_ip": true}, {"header": "A", "header": "B"}]})",
                  "d.json"),
              "d.json: identity[1].header: duplicate key");
}

TEST(ParseConfig, MaxWindowIsAccepted) {
    EXPECT_NO_THROW(parse_config(
        "policies:\n  a: {algorithm: fixed_window, limit: 1, window: 365d, long_ttl: true}\n", "w.yaml"));
    EXPECT_NO_THROW(parse_config(
        "policies:\n  a: {algorithm: fixed_window, limit: 1, window: 8760h, long_ttl: true}\n", "w.yaml"));
}

TEST(ParseConfig, TokenBucketAtExactly2To53IsAccepted) {
    // 2^53 = 9007199254740992 = 4503599627370496 * 2ms.
    EXPECT_NO_THROW(
        parse_config("policies:\n  a: {algorithm: token_bucket, limit: 1, burst: 1000000000, "
                     "window: 9007199ms}\n",
                     "b.yaml"));
    EXPECT_NE(
        parse_error_of("policies:\n  a: {algorithm: token_bucket, limit: 1, burst: 1000000000, "
                       "window: 9007200ms}\n",
                       "b.yaml")
            .find("2^53"),
        std::string::npos);
}

}  // namespace
