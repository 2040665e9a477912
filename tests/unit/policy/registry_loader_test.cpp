// load_config / parse_config: valid registries load, and every rule has a fixture and an exact
// message.
#include "ratelimitd/policy/registry_loader.hpp"

#include "ratelimitd/config/resolve.hpp"
#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/policy/cidr.hpp"

#include "unit/policy/config_refusals.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <filesystem>
#include <set>
#include <sstream>

namespace {

using ratelimitd::test::parse_error_of;

using namespace ratelimitd::policy;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string registry_data_dir = std::string(RATELIMITD_TEST_DATA_DIR) + "/registry";

/// A canonical text dump of a Config, so two configs compare with a readable diff.
std::string dump(const Config& c) {
    std::ostringstream o;
    const Registry& r = c.registry;
    o << "prefix=" << r.prefix << "\ndefault_policy=" << r.default_policy.value_or("-") << '\n';
    for (const auto& [name, p] : r.policies) {
        o << "policy " << name << " name=" << p.name << " alg=" << to_string(p.algorithm)
          << " limit=" << p.limit << " window=" << p.window.count() << "ms burst=" << p.burst
          << " on_store_error=" << (p.on_store_error == OnStoreError::deny ? "deny" : "allow")
          << '\n';
    }
    for (const auto& rt : r.routes) {
        o << "route " << rt.method.value_or("*") << ' ' << rt.path << " -> " << rt.policy
          << " scope=" << rt.scope.value_or("-");
        for (const auto& l : rt.limits) o << " limit=" << l.policy << '@' << l.identity.value_or("*");
        o << '\n';
    }
    for (const auto& id : r.identity) {
        o << "identity "
          << (id.kind == IdentitySource::Kind::client_ip ? "client_ip" : "header:" + id.header)
          << (id.hash ? " hash" : "") << " name=" << id.name << '\n';
    }
    for (const auto& net : r.trusted_proxies) {
        char buf[INET6_ADDRSTRLEN];
        inet_ntop(net.v6 ? AF_INET6 : AF_INET, net.bytes.data(), buf, sizeof buf);
        o << "proxy " << buf << '/' << net.prefix_len << '\n';
    }
    o << "deny_status=" << r.auth.deny_status << "\nhash_secret=" << r.hash_secret.value_or("-")
      << '\n';
    const FileSettings& s = c.settings;
    o << "listen=" << s.listen.value_or("-") << "\nredis=" << s.redis.value_or("-")
      << "\nthreads=" << (s.threads ? std::to_string(*s.threads) : "-")
      << "\nlog_level=" << s.log_level.value_or("-")
      << "\nlog_format=" << s.log_format.value_or("-")
      << "\nstore_timeout=" << (s.store_timeout ? std::to_string(s.store_timeout->count()) : "-")
      << "\nmax_connections=" << (s.max_connections ? std::to_string(*s.max_connections) : "-")
      << "\nmax_requests_per_connection="
      << (s.max_requests_per_connection ? std::to_string(*s.max_requests_per_connection) : "-")
      << "\nrequest_timeout=" << (s.request_timeout ? std::to_string(s.request_timeout->count()) : "-")
      << "\nmemory_max_keys=" << (s.memory_max_keys ? std::to_string(*s.memory_max_keys) : "-")
      << '\n';
    return o.str();
}

std::string load_error_of(const std::string& path) {
    try {
        load_config(path);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "(loaded without error)";
}

//------------------------------------------------------------------------------
// Valid registries

TEST(LoadConfig, EveryValidFixtureLoads) {
    std::size_t n = 0;
    for (const auto& entry : fs::directory_iterator(registry_data_dir + "/valid")) {
        EXPECT_NO_THROW(load_config(entry.path().string())) << entry.path();
        ++n;
    }
    EXPECT_GE(n, 4u);
}

TEST(LoadConfig, ExampleConfigLoads) {
    const Config c = load_config(std::string(RATELIMITD_TEST_DATA_DIR) + "/../../config/example.yaml");
    const Policy* demo = c.registry.find("demo");
    ASSERT_NE(demo, nullptr);
    EXPECT_EQ(demo->algorithm, Algorithm::fixed_window);
    EXPECT_EQ(demo->limit, 5);
    EXPECT_EQ(demo->window, 10s);
    bool routed = false;
    for (const auto& r : c.registry.routes) routed = routed || r.policy == "demo";
    EXPECT_TRUE(routed);
}

TEST(LoadConfig, GcraAndSlidingWindow) {
    const Config c = load_config(registry_data_dir + "/valid/new_algorithms.yaml");
    const Policy& gcra = *c.registry.find("api-gcra");
    EXPECT_EQ(gcra.algorithm, Algorithm::gcra);
    EXPECT_EQ(gcra.limit, 10);
    EXPECT_EQ(gcra.window, 1s);
    EXPECT_EQ(gcra.burst, 20);
    EXPECT_EQ(gcra.max_cost(), 20);
    EXPECT_EQ(c.registry.find("api-gcra-default-burst")->burst, 5);  // default: limit
    const Policy& sw = *c.registry.find("search");
    EXPECT_EQ(sw.algorithm, Algorithm::sliding_window);
    EXPECT_EQ(sw.limit, 100);
    EXPECT_EQ(sw.window, 1min);
    EXPECT_EQ(sw.max_cost(), 100);
    EXPECT_STREQ(ratelimitd::policy::to_string(Algorithm::gcra), "gcra");
    EXPECT_STREQ(ratelimitd::policy::to_string(Algorithm::sliding_window), "sliding_window");
}

TEST(LoadConfig, WindowsPlansTenantsAndShadow) {
    const Config c = load_config(registry_data_dir + "/valid/plans_windows_shadow.yaml");
    const Registry& reg = c.registry;
    const Policy& tiered = *reg.find("api-tiered");
    ASSERT_EQ(tiered.windows.size(), 2u);
    EXPECT_EQ(tiered.windows[0].name, "api-tiered-1m");  // default item name: policy-span
    EXPECT_EQ(tiered.windows[0].limit, 100);
    EXPECT_EQ(tiered.windows[0].window, 1min);
    EXPECT_EQ(tiered.windows[1].name, "api-daily");
    EXPECT_EQ(tiered.windows[1].window, 24h);
    EXPECT_EQ(tiered.windows[1].algorithm, Algorithm::fixed_window);
    EXPECT_EQ(tiered.max_cost(), 100);  // the smallest window decides
    EXPECT_EQ(tiered.key_name(), "api-tiered");
    EXPECT_TRUE(reg.find("exports")->long_ttl);
    EXPECT_TRUE(reg.find("new-limit")->shadow);
    EXPECT_FALSE(tiered.shadow);

    const Policy& pro = reg.plans.at("pro").policies.at("api-default");
    EXPECT_EQ(pro.name, "api-default");
    EXPECT_EQ(pro.plan, "pro");
    EXPECT_EQ(pro.key_name(), "api-default@pro");
    EXPECT_EQ(pro.algorithm, Algorithm::token_bucket);  // inherited
    EXPECT_EQ(pro.limit, 600);
    EXPECT_EQ(pro.burst, 1200);
    const Policy& pro_tiered = reg.plans.at("pro").policies.at("api-tiered");
    ASSERT_EQ(pro_tiered.windows.size(), 2u);
    EXPECT_EQ(pro_tiered.windows[1].limit, 50000);
    EXPECT_EQ(pro_tiered.windows[1].plan, "pro");

    EXPECT_EQ(reg.tenants.at("tenant_8231").plan, "pro");
    const TenantSettings& ip = reg.tenants.at("ip:10.0.0.1");
    EXPECT_EQ(ip.plan, "free");
    EXPECT_EQ(ip.overrides.at("api-default").limit, 5);
    EXPECT_EQ(ip.overrides.at("api-default").key_name(), "api-default@tenant");
}

TEST(ParseConfig, WindowsMayHaveBurstForTokenBuckets) {
    const Config c = parse_config(
        "policies:\n  a:\n    algorithm: token_bucket\n    windows:\n      - {limit: 10, window: 1s, burst: 20}\n"
        "      - {limit: 100, window: 1h}\n",
        "w.yaml");
    const Policy& a = *c.registry.find("a");
    EXPECT_EQ(a.windows[0].burst, 20);
    EXPECT_EQ(a.windows[1].burst, 100);
    EXPECT_EQ(a.max_cost(), 20);
}

TEST(LoadConfig, ContractExampleMeansWhatTheContractSays) {
    const std::string file = registry_data_dir + "/valid/contract.yaml";
    const Config c = load_config(file);
    const Registry& r = c.registry;
    EXPECT_EQ(r.source_file, file);
    EXPECT_EQ(r.prefix, "rl");
    EXPECT_EQ(r.default_policy, "api-default");
    ASSERT_EQ(r.policies.size(), 3u);

    const Policy& api = *r.find("api-default");
    EXPECT_EQ(api.name, "api-default");
    EXPECT_EQ(api.algorithm, Algorithm::token_bucket);
    EXPECT_EQ(api.limit, 60);
    EXPECT_EQ(api.window, 60s);
    EXPECT_EQ(api.burst, 60);
    EXPECT_EQ(api.on_store_error, OnStoreError::allow);

    const Policy& login = *r.find("login");
    EXPECT_EQ(login.algorithm, Algorithm::fixed_window);
    EXPECT_EQ(login.limit, 5);
    EXPECT_EQ(login.window, 1min);
    EXPECT_EQ(login.burst, 5);  // burst equals limit outside the token bucket
    EXPECT_EQ(login.on_store_error, OnStoreError::deny);

    const Policy& exports = *r.find("exports");
    EXPECT_EQ(exports.algorithm, Algorithm::sliding_log);
    EXPECT_EQ(exports.window, 1h);
    EXPECT_EQ(exports.on_store_error, OnStoreError::allow);

    ASSERT_EQ(r.routes.size(), 4u);
    EXPECT_EQ(r.routes[0].method, "POST");
    EXPECT_EQ(r.routes[0].path, "/v1/exports");
    EXPECT_EQ(r.routes[0].policy, "exports");
    EXPECT_EQ(r.routes[0].scope, "POST_/v1/exports");
    EXPECT_EQ(r.routes[1].method, std::nullopt);
    EXPECT_EQ(r.routes[2].policy, "none");
    EXPECT_EQ(r.routes[3].path, "/v1/*");

    ASSERT_EQ(r.identity.size(), 3u);
    EXPECT_EQ(r.identity[0].kind, IdentitySource::Kind::header);
    EXPECT_EQ(r.identity[0].header, "X-Tenant-Id");
    EXPECT_FALSE(r.identity[0].hash);
    EXPECT_EQ(r.identity[1].header, "X-Api-Key");
    EXPECT_TRUE(r.identity[1].hash);
    EXPECT_EQ(r.identity[2].kind, IdentitySource::Kind::client_ip);
    EXPECT_EQ(r.identity[2].prefixes.ipv6, 64);

    ASSERT_EQ(r.trusted_proxies.size(), 2u);
    EXPECT_TRUE(cidr_contains(r.trusted_proxies[0], "127.0.0.1"));
    EXPECT_FALSE(cidr_contains(r.trusted_proxies[0], "127.0.0.2"));
    EXPECT_TRUE(cidr_contains(r.trusted_proxies[1], "::1"));
    EXPECT_EQ(r.auth.deny_status, 429);
    EXPECT_EQ(r.hash_secret, std::nullopt);
}

TEST(LoadConfig, DefaultsApplyWhenKeysAreLeftOut) {
    const Config c = load_config(registry_data_dir + "/valid/minimal.yaml");
    EXPECT_EQ(c.registry.prefix, "rl");
    EXPECT_EQ(c.registry.default_policy, std::nullopt);
    EXPECT_TRUE(c.registry.routes.empty());
    EXPECT_TRUE(c.registry.identity.empty());
    EXPECT_TRUE(c.registry.trusted_proxies.empty());
    EXPECT_EQ(c.registry.auth.deny_status, 429);
    EXPECT_EQ(c.registry.find("api")->on_store_error, OnStoreError::allow);
    EXPECT_EQ(c.settings.listen, std::nullopt);
    EXPECT_EQ(c.settings.store_timeout, std::nullopt);
}

TEST(LoadConfig, YamlAndJsonWithTheSameContentLoadEqual) {
    const Config yaml = load_config(registry_data_dir + "/valid/full.yaml");
    const Config json = load_config(registry_data_dir + "/valid/full.json");
    EXPECT_EQ(dump(yaml), dump(json));
}

TEST(LoadConfig, FullFixtureReadsEveryKey) {
    const Config c = load_config(registry_data_dir + "/valid/full.yaml");
    const Registry& r = c.registry;
    EXPECT_EQ(r.prefix, "rl.prod-1");
    EXPECT_EQ(r.find("api")->burst, 150);
    EXPECT_EQ(r.find("exports")->limit, 100000);
    EXPECT_EQ(r.routes[0].method, "POST");  // written "post"
    EXPECT_EQ(r.routes[1].scope, "123");    // quoted digits stay text
    EXPECT_EQ(r.trusted_proxies[1].prefix_len, 32);
    EXPECT_EQ(r.auth.deny_status, 403);
    EXPECT_EQ(r.hash_secret, "0123456789abcdef0123");
    EXPECT_EQ(c.settings.listen, "[::1]:8080");
    EXPECT_EQ(c.settings.redis, "redis://:s3cret@127.0.0.1:6379/2");
    EXPECT_EQ(c.settings.threads, 4);
    EXPECT_EQ(c.settings.log_level, "debug");
    EXPECT_EQ(c.settings.log_format, "json");
    EXPECT_EQ(c.settings.store_timeout, 50ms);
    EXPECT_EQ(c.settings.max_connections, 5000);
    EXPECT_EQ(c.settings.max_requests_per_connection, 1000);
    EXPECT_EQ(c.settings.request_timeout, 2s);
    EXPECT_EQ(c.settings.memory_max_keys, 200000);
}

TEST(ParseConfig, MemoryMaxKeysZeroMeansNoCap) {
    const std::string base = "policies:\n  a: {algorithm: fixed_window, limit: 1, window: 1s}\n";
    EXPECT_EQ(parse_config(base + "memory_max_keys: 0\n", "m.yaml").settings.memory_max_keys, 0);
    EXPECT_EQ(parse_config(base, "m.yaml").settings.memory_max_keys, std::nullopt);
}

TEST(LoadConfig, LayeredLimitsKeepTheirOrderAndIdentities) {
    const Config c = load_config(registry_data_dir + "/valid/layered.yaml");
    const Registry& r = c.registry;
    ASSERT_EQ(r.identity.size(), 3u);
    EXPECT_EQ(r.identity[0].name, "tenant");
    EXPECT_EQ(r.identity[1].name, "api_key");
    EXPECT_EQ(r.identity[2].name, "ip");  // a client_ip source may be renamed

    ASSERT_EQ(r.routes.size(), 3u);
    const Route& v1 = r.routes[0];
    EXPECT_EQ(v1.policy, "per-key");  // the first limit, for /v1/check's single-policy paths
    ASSERT_EQ(v1.limits.size(), 2u);
    EXPECT_EQ(v1.limits[0].policy, "per-key");
    EXPECT_EQ(v1.limits[0].identity, "api_key");
    EXPECT_EQ(v1.limits[1].policy, "per-ip");
    EXPECT_EQ(v1.limits[1].identity, "client_ip");

    ASSERT_EQ(r.routes[1].limits.size(), 1u);  // one limit, no identity: the list in order
    EXPECT_EQ(r.routes[1].limits[0].identity, std::nullopt);

    // The old form is one limit with no identity.
    const Route& admin = r.routes[2];
    EXPECT_EQ(admin.policy, "login");
    ASSERT_EQ(admin.limits.size(), 1u);
    EXPECT_EQ(admin.limits[0].policy, "login");
    EXPECT_EQ(admin.limits[0].identity, std::nullopt);
    EXPECT_EQ(admin.scope, "admin");
}

TEST(LoadConfig, PolicyNoneRouteHasNoLimits) {
    const Config c = load_config(registry_data_dir + "/valid/contract.yaml");
    EXPECT_EQ(c.registry.routes[2].policy, "none");
    EXPECT_TRUE(c.registry.routes[2].limits.empty());
    ASSERT_EQ(c.registry.routes[3].limits.size(), 1u);
    EXPECT_EQ(c.registry.routes[3].limits[0].policy, "api-default");
    EXPECT_EQ(c.registry.identity[2].name, "client_ip");  // the default name
    EXPECT_EQ(c.registry.identity[0].name, "");           // unnamed header source
}

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

TEST(LoadConfig, UnreadableFileNamesTheCause) {
    EXPECT_EQ(load_error_of(registry_data_dir + "/does-not-exist.yaml"),
              registry_data_dir + "/does-not-exist.yaml: cannot read: No such file or directory");
    EXPECT_EQ(load_error_of(registry_data_dir + "/valid"), registry_data_dir + "/valid: cannot read: Is a directory");
}

//------------------------------------------------------------------------------
// One fixture per rule, each with its exact message (after "<file>: ").

struct InvalidCase {
    const char* file;
    std::string message;
};

// The process settings' file keys follow the registry's own keys, in the settings table's
// order: the table owns that list (settings_table_test.cpp checks its rows), so a new setting
// does not edit this file.
std::string process_setting_keys() {
    std::string out;
    for (const auto key : ratelimitd::config::file_setting_keys()) {
        out += (out.empty() ? "" : ", ") + std::string(key);
    }
    return out;
}

const InvalidCase invalid_cases[] = {
    // syntax
    {"syntax_error.yaml", "line 5, column 4: invalid YAML: end of map not found"},
    {"syntax_error.json",
     "line 3, column 70: invalid JSON: syntax error while parsing object key - unexpected '}'; expected string literal"},
    // syntax: no exception of a parser escapes, no text of the file is echoed, bounds hold
    {"number_overflow.json", "line 1, column 63: invalid JSON: number out of range (at most about 1.8e308)"},
    {"secret_in_syntax_error.json",
     "line 2, column 42: invalid JSON: syntax error while parsing value - invalid string: forbidden character after "
     "backslash"},
    {"invalid_utf8.json",
     "line 2, column 24: invalid JSON: syntax error while parsing value - invalid string: ill-formed UTF-8 byte"},
    {"nested_too_deep.json",
     "x[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]"
     "[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: nested deeper than 64 levels of "
     "maps and lists (the bound of a config file)"},
    {"nested_too_deep.yaml",
     "line 4, column 67: nested deeper than 64 levels of maps and lists (the bound of a config file)"},
    {"alias_bomb.yaml",
     "line 2, column 55: more than 1000000 values (the bound of a config file, YAML aliases expanded)"},
    {"duplicate_key.yaml", "policies.api: duplicate key"},
    {"duplicate_key.json", "routes[0].policy: duplicate key"},
    {"wrong_extension.toml", "expected a .yaml, .yml or .json file"},
    // top level
    {"not_a_map.yaml",
     R"((top level): expected a map of settings (at least "policies"), got a list)"},
    {"empty.yaml", R"((top level): expected a map of settings (at least "policies"), got null)"},
    {"unknown_top_level_key.yaml",
     "colour: unknown key (expected one of: prefix, default_policy, policies, plans, tenants, routes, case_insensitive, "
     "identity, trusted_proxies, "
     "auth, domains, envoy_config, envoy_denied_calls, envoy_merge_domains, notify, rlqs, hash_secret, " +
         process_setting_keys() + ")"},
    {"policies_missing.yaml", "policies: missing (expected a map of policy names to policies)"},
    {"policies_not_a_map.yaml", "policies: expected a map of policy names to policies, got a list"},
    {"policies_empty.yaml", "policies: expected at least one policy"},
    {"prefix_with_colon.yaml",
     R"(prefix: expected 1..64 bytes of A-Z, a-z, 0-9, '.', '_' or '-', got "rl:x")"},
    {"default_policy_undefined.yaml", R"(default_policy: "nope" is not a defined policy)"},
    // policies
    {"policy_name_invalid.yaml",
     "policies.api/v1: expected a policy name of 1..64 bytes of A-Z, a-z, 0-9, '.', '_' or '-'"},
    {"policy_name_none.yaml",
     R"(policies.none: "none" is reserved for routes that are not limited; choose another name)"},
    {"policy_not_a_map.yaml",
     "policies.api: expected a map with algorithm, limit and window, got 10"},
    {"policy_unknown_key.yaml",
     "policies.api.colour: unknown key (expected one of: algorithm, limit, window, burst, windows, on_store_error, "
     "shadow, long_ttl, align, utc_offset, lease, max_debt, max_delay, delay, max_held)"},
    {"algorithm_missing.yaml",
     "policies.api.algorithm: missing (expected one of token_bucket, sliding_log, fixed_window, gcra, "
     "sliding_window, concurrency)"},
    {"algorithm_unknown.yaml",
     R"(policies.api.algorithm: expected one of token_bucket, sliding_log, fixed_window, gcra, sliding_window, concurrency, got "leaky")"},
    {"limit_missing.yaml", "policies.api.limit: missing (expected an integer 1..1000000000)"},
    {"limit_zero.yaml", "policies.api.limit: expected an integer 1..1000000000, got 0"},
    {"limit_too_large.yaml",
     "policies.api.limit: expected an integer 1..1000000000, got 1000000001"},
    {"limit_quoted.yaml", R"(policies.api.limit: expected an integer 1..1000000000, got "10")"},
    {"window_missing.yaml",
     R"(policies.api.window: missing (expected a duration such as "500ms", "60s" or "1m"))"},
    {"window_without_unit.yaml",
     R"(policies.login.window: expected a duration such as "500ms", "60s" or "1m", got "60")"},
    {"access_log_invalid.yaml", "access_log: expected one of off, denied, all, got \"sometimes\""},
    {"admin_token_too_short.yaml", "admin_token: expected a string of at least 16 bytes"},
    {"access_log_sample_out_of_range.yaml", "access_log_sample: expected a number from 0 to 1, got 2"},
    {"window_zero.yaml",
     R"(policies.api.window: expected a duration such as "500ms", "60s" or "1m", got "0s" (must be at least 1ms))"},
    {"window_too_long.yaml", R"(policies.api.window: expected at most 365d, got "366d")"},
    {"burst_not_token_bucket.yaml",
     "policies.login.burst: only allowed with algorithm token_bucket or gcra, this policy uses fixed_window"},
    {"burst_zero.yaml", "policies.api.burst: expected an integer 1..1000000000, got 0"},
    {"burst_times_window_over_2_53.yaml",
     "policies.api: expected burst * window in ms <= 2^53 (9007199254740992) so the token bucket stays exact in "
     "Lua, got 1000000 * 31536000000"},
    {"gcra_burst_times_window_over_2_53.yaml",
     "policies.api: expected burst * window in ms <= 2^53 (9007199254740992) so the GCRA stays exact in "
     "Lua, got 1000000 * 31536000000"},
    {"sliding_window_limit_times_window_over_2_53.yaml",
     "policies.api: expected limit * window in ms <= 2^53 (9007199254740992) so the sliding window stays "
     "exact in Lua, got 1000000 * 31536000000"},
    {"sliding_log_limit_too_large.yaml",
     "policies.exports.limit: expected at most 100000 for sliding_log (each admitted unit is one sorted-set "
     "member in Redis), got 100001"},
    {"on_store_error_invalid.yaml",
     R"(policies.api.on_store_error: expected one of allow, deny, got "open")"},
    // routes
    {"routes_not_a_list.yaml", "routes: expected a list of routes, got a map"},
    {"route_not_a_map.yaml", R"(routes[0]: expected a map with path and policy, got "/v1/*")"},
    {"route_unknown_key.yaml",
     "routes[0].verb: unknown key (expected one of: method, path, policy, limits, scope, case_insensitive)"},
    {"route_path_not_normalised.yaml",
     R"(routes[0].path: expected a normalised path (write "/v1/exports/x"), got "/v1//exports/./x")"},
    {"route_case_insensitive_not_bool.yaml",
     R"(routes[0].case_insensitive: expected true or false, got "yes")"},
    {"case_insensitive_not_bool.yaml", "case_insensitive: expected true or false, got 1"},
    {"route_path_missing.yaml", "routes[0].path: missing (expected a path starting with '/')"},
    {"route_path_relative.yaml",
     R"(routes[0].path: expected a path starting with '/', got "v1/exports")"},
    {"route_path_inner_star.yaml",
     R"(routes[0].path: expected '*' only at the end (a prefix match), got "/v1/*/exports")"},
    {"route_method_invalid.yaml",
     R"(routes[0].method: expected an HTTP method such as GET or POST (letters only), got "GET /x")"},
    {"route_policy_missing.yaml",
     R"(routes[0].policy: missing (expected a policy name or "none", or limits: a list of limits))"},
    {"route_policy_undefined.yaml", R"(routes[2].policy: "exprots" is not a defined policy)"},
    // layered limits
    {"route_policy_and_limits.yaml", "routes[0]: expected either policy or limits, not both"},
    {"route_limits_empty.yaml",
     "routes[0].limits: expected a list of 1..8 limits such as {policy: per-ip, identity: client_ip}, got 0 limits"},
    {"route_limits_too_many.yaml",
     "routes[0].limits: expected a list of 1..8 limits such as {policy: per-ip, identity: client_ip}, got 9 limits"},
    {"route_limits_not_a_list.yaml",
     "routes[0].limits: expected a list of 1..8 limits such as {policy: per-ip, identity: client_ip}, got a map"},
    {"route_limit_not_a_map.yaml",
     R"(routes[0].limits[0]: expected a map with policy [and identity], got "per-ip")"},
    {"route_limit_unknown_key.yaml",
     "routes[0].limits[0].cost: unknown key (expected one of: policy, identity)"},
    {"route_limit_policy_missing.yaml", "routes[0].limits[0].policy: missing (expected a policy name)"},
    {"route_limit_policy_undefined.yaml", R"(routes[0].limits[1].policy: "per-kye" is not a defined policy)"},
    {"route_limit_policy_none.yaml",
     R"(routes[0].limits[1].policy: "none" cannot be one of several limits; write policy: none for the route)"},
    {"route_limit_policy_twice.yaml",
     R"(routes[0].limits[1].policy: "per-ip" is already limits[0]; a policy may appear once per route)"},
    {"route_limit_identity_unknown.yaml",
     R"(routes[0].limits[0].identity: "apikey" is not the name of an identity source (known: client_ip, api_key))"},
    {"route_scope_invalid.yaml",
     "routes[0].scope: byte 2 (0x3a ':') is not allowed; use printable ASCII without spaces or ':'"},
    // identity, proxies, auth
    {"identity_not_a_list.yaml", "identity: expected a list of identity sources, got a map"},
    {"identity_header_and_client_ip.yaml",
     "identity[0]: expected exactly one of {header: NAME [, hash: true|false]} or {client_ip: true}"},
    {"identity_neither.yaml",
     "identity[0]: expected exactly one of {header: NAME [, hash: true|false]} or {client_ip: true}"},
    {"identity_unknown_key.yaml",
     "identity[0].cookie: unknown key (expected one of: header, hash, client_ip, ipv4_prefix, ipv6_prefix, name)"},
    {"identity_ipv6_prefix_out_of_range.yaml", "identity[0].ipv6_prefix: expected an integer 32..128, got 16"},
    {"identity_ipv4_prefix_out_of_range.yaml", "identity[0].ipv4_prefix: expected an integer 16..32, got 33"},
    {"identity_prefix_with_header.yaml", "identity[0].ipv6_prefix: only allowed with client_ip: true"},
    {"identity_client_ip_twice.yaml", R"(identity[1].name: "client_ip" is already the name of identity[0])"},
    {"identity_name_invalid.yaml",
     R"(identity[0].name: expected a name of 1..64 bytes of A-Z, a-z, 0-9, '.', '_' or '-', got "api key")"},
    {"identity_name_duplicate.yaml", R"(identity[1].name: "key" is already the name of identity[0])"},
    {"identity_name_client_ip_reserved.yaml",
     R"(identity[0].name: "client_ip" is reserved for the client address)"},
    {"identity_client_ip_false.yaml", "identity[0].client_ip: expected true, got false"},
    {"identity_hash_with_client_ip.yaml", "identity[0].hash: only allowed with header"},
    {"identity_header_invalid.yaml",
     R"(identity[0].header: expected a header name such as X-Tenant-Id, got "X Tenant")"},
    {"identity_hash_not_bool.yaml", R"(identity[0].hash: expected true or false, got "yes")"},
    {"trusted_proxies_not_a_list.yaml",
     R"(trusted_proxies: expected a list of CIDRs, got "127.0.0.1/32")"},
    {"trusted_proxy_invalid.yaml",
     R"(trusted_proxies[1]: expected an IPv4 or IPv6 address or CIDR such as "10.0.0.0/8" or "::1/128", got "10.0.0.0/33")"},
    {"auth_not_a_map.yaml", "auth: expected a map with deny_status, got 403"},
    {"auth_unknown_key.yaml", "auth.deny_code: unknown key (expected one of: deny_status)"},
    {"auth_deny_status_out_of_range.yaml",
     "auth.deny_status: expected an integer 400..599, got 200"},
    {"hash_secret_too_short.yaml", "hash_secret: expected at least 16 bytes, got 12"},
    // process settings
    {"listen_invalid.yaml",
     R"(listen: expected HOST:PORT such as "127.0.0.1:8080" or "[::1]:8080", got "8080")"},
    {"listen_ipv6_unbracketed.yaml",
     R"(listen: expected HOST:PORT such as "127.0.0.1:8080" or "[::1]:8080", got "::1:8080")"},
    {"redis_invalid.yaml",
     R"(redis: expected a URL such as "redis://127.0.0.1:6379" (starting with "redis://", "redis-sentinel://" or "redis-cluster://", or "rediss" for TLS))"},
    {"threads_out_of_range.yaml", "threads: expected an integer 1..256, got 0"},
    {"log_level_invalid.yaml",
     R"(log_level: expected one of trace, debug, info, warn, error, got "verbose")"},
    {"log_format_invalid.yaml", R"(log_format: expected one of text, json, got "xml")"},
    {"store_timeout_invalid.yaml",
     R"(store_timeout: expected a duration such as "500ms", "60s" or "1m", got "50")"},
    {"store_timeout_too_large.yaml", R"(store_timeout: expected a duration from 1ms to 1m, got "106751991167d")"},
    {"max_connections_zero.yaml", "max_connections: expected an integer 1..1000000, got 0"},
    {"max_requests_per_connection_text.yaml",
     R"(max_requests_per_connection: expected an integer 1..1000000000, got "many")"},
    {"request_timeout_too_short.yaml", R"(request_timeout: expected a duration from 100ms to 10m, got "10ms")"},
    // multi-window policies, plans, tenants, shadow mode
    {"windows_duplicate_span.yaml", "policies.api.windows[1].window: duplicate span 1m (windows[0] has it too)"},
    {"windows_with_limit.yaml", "policies.api.limit: not allowed with windows (each window has its own)"},
    {"windows_only_one.yaml",
     "policies.api.windows: expected a list of 2..8 windows such as {limit: 100, window: 1m}, got 1 windows"},
    {"windows_duplicate_name.yaml", R"(policies.api.windows[1].name: "w" is already the name of windows[0])"},
    {"window_over_a_day_without_long_ttl.yaml",
     "policies.api.windows[1].window: a window longer than 1d keeps its keys longer than a day (got 7d); set "
     "long_ttl: true on the policy to confirm"},
    {"plan_policy_undefined.yaml", R"(plans.pro.apii: "apii" is not a defined policy)"},
    {"plan_name_reserved.yaml",
     R"(plans.tenant: "tenant" is reserved (it marks a tenant's own overrides in keys); choose another name)"},
    {"plan_sets_algorithm.yaml",
     "plans.pro.api.algorithm: inherited from policies.api; a plan or override sets only limit, window, burst or "
     "windows"},
    {"tenant_plan_undefined.yaml", R"(tenants.tenant_1.plan: "enterprise" is not a defined plan)"},
    {"tenant_override_policy_undefined.yaml", R"(tenants.tenant_1.overrides.apii: "apii" is not a defined policy)"},
    {"tenant_id_invalid.yaml", "tenants.tenant 1: byte 7 (0x20) is not allowed; use A-Z, a-z, 0-9 and . _ : @ -"},
    {"shadow_not_bool.yaml", R"(policies.api.shadow: expected true or false, got "yes")"},
    {"memory_max_keys_too_small.yaml",
     "memory_max_keys: expected 0 (no cap) or an integer 64..1000000000, got 10"},
};

class InvalidFixture : public testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidFixture, FailsWithItsExactMessage) {
    const std::string path = registry_data_dir + "/invalid/" + GetParam().file;
    EXPECT_EQ(load_error_of(path), path + ": " + GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(Registry, InvalidFixture, testing::ValuesIn(invalid_cases),
                         [](const testing::TestParamInfo<InvalidCase>& info) {
                             std::string name = info.param.file;
                             for (char& c : name) {
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             }
                             return name;
                         });

TEST(InvalidFixtures, EveryFixtureHasAnExpectedMessage) {
    std::set<std::string> listed;
    for (const auto& c : invalid_cases) {
        EXPECT_TRUE(listed.insert(c.file).second) << "listed twice: " << c.file;
    }
    for (const auto& entry : fs::directory_iterator(registry_data_dir + "/invalid")) {
        EXPECT_TRUE(listed.count(entry.path().filename().string()) == 1)
            << entry.path().filename() << " has no entry in invalid_cases";
    }
    EXPECT_EQ(listed.size(),
              static_cast<std::size_t>(std::distance(fs::directory_iterator(registry_data_dir + "/invalid"),
                                                     fs::directory_iterator{})));
}

}  // namespace

namespace {

using ratelimitd::policy::ConfigError;

/// Whatever the text, parse_config refuses it with a ConfigError or loads it: nothing else.
std::string refusal_of(std::string_view text, const std::string& name) {
    try {
        ratelimitd::policy::parse_config(text, name);
    } catch (const ConfigError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("ESCAPED: ") + e.what();
    }
    return "(loaded without error)";
}

TEST(ParseConfigSyntax, MalformedLinesNeverEchoTheirText) {
    const std::string policy = R"("policies": {"p": {"algorithm": "fixed_window", "limit": 1, "window": "1s"}})";
    for (const std::string& text : {
             "{" + policy + ", \"admin_token\": hunter2-secret-token}",
             "{" + policy + ", \"hash_secret\": \"hunter2-secret\x01token\"}",
             "{" + policy + ", \"redis\": \"redis://:hunter2-secret@db:6379\\x\"}",
             "{" + policy + ", \"admin_token\": 1e999999hunter2}",
             "{" + policy + ", \"admin_token\" \"hunter2-secret-token\"}",
         }) {
        const std::string msg = refusal_of(text, "s.json");
        EXPECT_EQ(msg.find("hunter2"), std::string::npos) << msg;
        EXPECT_TRUE(msg.starts_with("s.json: line 1, column ")) << msg;
    }
    const std::string yaml = refusal_of("policies: {p: 1}\nhash_secret: \"hunter2-\\q-secret\"\n", "s.yaml");
    EXPECT_EQ(yaml.find("hunter2"), std::string::npos) << yaml;
    EXPECT_TRUE(yaml.starts_with("s.yaml: line 2, column ")) << yaml;
}

TEST(ParseConfigSyntax, HostileDocumentsAreRefusedNotThrown) {
    const std::string deep_json(200'000, '[');
    const std::string deep_yaml = "x: " + std::string(200'000, '[');
    const std::string wide_json = "[" + [] {
        std::string s;
        for (int i = 0; i < 1'000'001; ++i) s += "1,";
        return s;
    }() + "1]";
    for (const auto& [text, name] : std::vector<std::pair<std::string, std::string>>{
             {R"({"policies": {"p": {"limit": -1e400}}})", "n.json"},
             {"\"\\ud800\"", "u.json"},
             {"policies: \"\xff\xfe\"\n", "u.yaml"},
             {std::string("policies:\0\n", 11), "z.yaml"},
             {deep_json, "d.json"},
             {deep_yaml, "d.yaml"},
             {wide_json, "w.json"},
             {"a: &a [1, 2]\nb: *a\nc: *unknown\n", "a.yaml"},
         }) {
        const std::string msg = refusal_of(text, name);
        EXPECT_TRUE(msg.starts_with(name + ": ")) << msg;
    }
    EXPECT_EQ(refusal_of(wide_json, "w.json"),
              "w.json: [999999]: more than 1000000 values (the bound of a config file, YAML aliases expanded)");
}

TEST(ParseConfigSyntax, DocumentSizeIsBounded) {
    const std::string big(16 * 1024 * 1024 + 1, ' ');
    EXPECT_EQ(refusal_of(big, "big.yaml"), "big.yaml: larger than 16 MiB (the bound of a config file)");
}

TEST(ParseConfigSyntax, DepthUpToTheBoundIsRead) {
    const std::string policy = R"("policies": {"p": {"algorithm": "fixed_window", "limit": 1, "window": "1s"}})";
    // 64 levels: the top-level map and 63 lists; refused by the schema (unknown key), not the bound.
    const std::string text = "{" + policy + ", \"x\": " + std::string(63, '[') + std::string(63, ']') + "}";
    EXPECT_EQ(refusal_of(text, "d.json").find("nested deeper"), std::string::npos) << refusal_of(text, "d.json");
}

}  // namespace
