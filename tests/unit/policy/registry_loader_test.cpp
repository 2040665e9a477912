// load_config / parse_config: the valid registries load, and mean what they say (the invalid
// ones: registry_loader_invalid_test.cpp; parsing details: registry_loader_parse_test.cpp;
// hostile syntax: registry_loader_syntax_test.cpp).
#include "ratelimitd/policy/registry_loader.hpp"

#include "ratelimitd/config/resolve.hpp"
#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/policy/cidr.hpp"

#include "unit/policy/config_refusals.hpp"
#include "unit/policy/registry_fixtures.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <filesystem>
#include <sstream>

namespace {

using ratelimitd::test::registry_data_dir;

using namespace ratelimitd::policy;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

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

}  // namespace
