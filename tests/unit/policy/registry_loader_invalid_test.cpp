// load_config refusals: an unreadable file, and one fixture per rule (tests/data/registry/
// invalid), each with its exact message.
#include "ratelimitd/policy/registry_loader.hpp"

#include "ratelimitd/config/resolve.hpp"

#include "unit/policy/registry_fixtures.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <iterator>
#include <set>
#include <string>

namespace {

using ratelimitd::test::load_error_of;
using ratelimitd::test::registry_data_dir;
namespace fs = std::filesystem;

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
