// Validates the tree of a config file (registry_reader.cpp reads it) into a Config.
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/registry_reader.hpp"
#include "ratelimitd/core/quote.hpp"

#include <openssl/sha.h>

#include <ctime>

#include "ratelimitd/check/validate.hpp"
#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/policy/cidr.hpp"
#include "ratelimitd/policy/path.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <system_error>
#include <vector>

namespace ratelimitd::policy {
namespace {

using Json = ConfigTree;

constexpr std::int64_t max_limit = 1'000'000'000;
constexpr std::int64_t max_sliding_log_limit = 100'000;
constexpr std::int64_t max_exact_double = std::int64_t{1} << 53;
constexpr std::chrono::milliseconds max_window = std::chrono::hours(24 * 365);
constexpr const char* duration_example = "a duration such as \"500ms\", \"60s\" or \"1m\"";
constexpr const char* name_charset = "1..64 bytes of A-Z, a-z, 0-9, '.', '_' or '-'";
// Limits of one route go to Redis as one script call with one key each: keep it small.
constexpr std::size_t max_route_limits = 8;
// Windows of one policy: each is a key of the same script call.
constexpr std::size_t max_policy_windows = 8;

//------------------------------------------------------------------------------
// Text helpers

/// A map key as it appears in a field path: printable as is, anything else escaped.
std::string path_segment(std::string_view key) {
    const std::string q = quote(key);
    return q.substr(1, q.size() - 2);
}

std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? path_segment(key) : path + "." + path_segment(key);
}

std::string join(const std::string& path, std::size_t index) {
    return path + "[" + std::to_string(index) + "]";
}

/// What a value is, for "got ..." in messages.
std::string describe(const Json& v) {
    switch (v.type()) {
    case Json::value_t::string: return quote(v.get_ref<const std::string&>());
    case Json::value_t::number_integer: return std::to_string(v.get<std::int64_t>());
    case Json::value_t::number_unsigned: return std::to_string(v.get<std::uint64_t>());
    case Json::value_t::number_float: return v.dump();
    case Json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "a map";
    case Json::value_t::array: return "a list";
    default: return "an unsupported value";
    }
}

/// The type only, for values that must not be echoed (secrets).
std::string type_name(const Json& v) {
    switch (v.type()) {
    case Json::value_t::string: return "a string";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "a map";
    case Json::value_t::array: return "a list";
    default: return "an unsupported value";
    }
}

std::string one_of_list(std::initializer_list<std::string_view> options, std::string_view sep) {
    std::string out;
    for (const auto o : options) {
        if (!out.empty()) out += sep;
        out += o;
    }
    return out;
}

[[noreturn]] void fail(const std::string& file, const std::string& path, const std::string& what) {
    throw ConfigError(file + ": " + (path.empty() ? std::string("(top level)") : path) + ": " +
                      what);
}

//------------------------------------------------------------------------------
// Schema: one validator over the Json tree

class Validator {
public:
    explicit Validator(const std::string& file) : file_(file) {}

    Config run(const Json& root);

private:
    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        policy::fail(file_, path, what);
    }

    /// The allow-list: every key of `obj` must be one of `allowed`.
    void check_keys(const Json& obj, const std::string& path,
                    std::initializer_list<std::string_view> allowed) const {
        for (const auto& [key, value] : obj.items()) {
            bool known = false;
            for (const auto a : allowed) known = known || a == key;
            if (!known) {
                fail(join(path, key),
                     "unknown key (expected one of: " + one_of_list(allowed, ", ") + ")");
            }
        }
    }

    static const Json* find(const Json& obj, std::string_view key) {
        const auto it = obj.find(std::string(key));
        return it == obj.end() ? nullptr : &*it;
    }

    const Json& require(const Json& obj, const std::string& path, std::string_view key,
                        const std::string& expected) const {
        const Json* v = find(obj, key);
        if (v == nullptr) fail(join(path, key), "missing (expected " + expected + ")");
        return *v;
    }

    std::string need_string(const Json& v, const std::string& path,
                            const std::string& expected) const {
        if (!v.is_string()) fail(path, "expected " + expected + ", got " + describe(v));
        return v.get<std::string>();
    }

    std::int64_t need_int(const Json& v, const std::string& path, std::int64_t lo,
                          std::int64_t hi) const {
        const bool in_range = (v.is_number_integer() && !v.is_number_unsigned() &&
                               v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= hi) ||
                              (v.is_number_unsigned() && hi >= 0 &&
                               v.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) &&
                               static_cast<std::int64_t>(v.get<std::uint64_t>()) >= lo);
        if (!in_range) {
            fail(path, "expected an integer " + std::to_string(lo) + ".." + std::to_string(hi) +
                           ", got " + describe(v));
        }
        return v.is_number_unsigned() ? static_cast<std::int64_t>(v.get<std::uint64_t>())
                                      : v.get<std::int64_t>();
    }

    bool need_bool(const Json& v, const std::string& path) const {
        if (!v.is_boolean()) fail(path, "expected true or false, got " + describe(v));
        return v.get<bool>();
    }

    std::string need_one_of(const Json& v, const std::string& path,
                            std::initializer_list<std::string_view> options) const {
        if (v.is_string()) {
            for (const auto o : options) {
                if (o == v.get_ref<const std::string&>()) return std::string(o);
            }
        }
        fail(path, "expected one of " + one_of_list(options, ", ") + ", got " + describe(v));
    }

    std::chrono::milliseconds need_duration(const Json& v, const std::string& path) const {
        // `window: 60` arrives as an integer; parse its text so the message shows the missing unit.
        std::string text;
        if (v.is_string()) {
            text = v.get<std::string>();
        } else if (v.is_number_integer()) {
            text = describe(v);
        } else {
            fail(path, std::string("expected ") + duration_example + ", got " + describe(v));
        }
        const auto d = parse_duration(text);
        if (!d) fail(path, d.error().detail);
        return *d;
    }

    void read_policies(const Json& root, Registry& reg) const;
    Policy read_policy(const std::string& name, const Json& body, const std::string& path) const;
    /// limit/window/burst, or a `windows:` list, into `p` (whose algorithm is set).
    void read_limits(const Json& body, const std::string& path, Policy& p) const;
    void read_window(const Json& body, const std::string& path, Policy& p) const;
    /// Windows over a day need `long_ttl: true`: their keys outlive a day.
    void check_long_windows(const Policy& p, const std::string& path) const;
    void read_plans(const Json& v, Registry& reg) const;
    void read_tenants(const Json& v, Registry& reg) const;
    /// {policy: limits} of a plan or of a tenant's overrides, each policy defined.
    std::map<std::string, Policy, std::less<>> read_variants(const Json& body, const std::string& path,
                                                             const std::string& label, const Registry& reg) const;
    /// A plan's or a tenant's limits for `base`: its numbers, everything else inherited.
    Policy read_variant(const Policy& base, const std::string& label, const Json& body,
                        const std::string& path) const;
    /// `case_insensitive` is the top-level default of the routes' own setting.
    void read_routes(const Json& v, Registry& reg, bool case_insensitive) const;
    /// A route's path: starting with '/', '*' only at the end, already normalised.
    std::string read_route_path(const Json& item, const std::string& path) const;
    /// A route's method, upper-cased: letters only.
    std::string read_route_method(const Json& m, const std::string& method_path) const;
    void read_route_limits(const Json& v, const std::string& path, const Registry& reg,
                           Route& r) const;
    void read_identity(const Json& v, Registry& reg) const;
    /// A source's name (client_ip sources default to "client_ip"), unique in the list.
    void read_identity_name(const Json& item, const std::string& path, const Registry& reg,
                            IdentitySource& src) const;
    /// ipv4_prefix / ipv6_prefix of a client_ip source, each within client_ip_bounds.
    ClientIpPrefixes read_client_ip_prefixes(const Json& item, const std::string& path) const;
    void read_trusted_proxies(const Json& v, Registry& reg) const;
    void read_settings(const Json& root, FileSettings& s) const;

    const std::string& file_;
};

Config Validator::run(const Json& root) {
    if (!root.is_object()) {
        fail("", "expected a map of settings (at least \"policies\"), got " + describe(root));
    }
    check_keys(
        root, "",
        {"prefix", "default_policy", "policies", "plans", "tenants", "routes", "case_insensitive", "identity",
         "trusted_proxies", "auth",
         "hash_secret", "listen", "redis", "threads", "log_level", "log_format", "store_timeout",
         "admin_token", "access_log", "access_log_sample", "max_connections",
         "max_requests_per_connection", "request_timeout", "memory_max_keys", "redis_tls_ca", "redis_tls_cert",
         "redis_tls_key", "redis_tls_server_name", "redis_tls_insecure_skip_verify"});

    Config cfg;
    Registry& reg = cfg.registry;
    reg.source_file = file_;

    if (const Json* v = find(root, "prefix")) {
        // The prefix shares the policy-name alphabet, which has no ':' (contract §5).
        reg.prefix = need_string(*v, "prefix", std::string("a key prefix of ") + name_charset);
        if (!check::is_valid_policy_name(reg.prefix)) {
            fail("prefix", std::string("expected ") + name_charset + ", got " + describe(*v));
        }
    }

    read_policies(root, reg);

    if (const Json* v = find(root, "default_policy")) {
        const std::string name = need_string(*v, "default_policy", "a policy name");
        if (reg.find(name) == nullptr) {
            fail("default_policy", quote(name) + " is not a defined policy");
        }
        reg.default_policy = name;
    }

    if (const Json* v = find(root, "plans")) read_plans(*v, reg);
    if (const Json* v = find(root, "tenants")) read_tenants(*v, reg);

    // Identity first: route limits name identity sources.
    if (const Json* v = find(root, "identity")) read_identity(*v, reg);
    if (const Json* v = find(root, "routes")) {
        const Json* ci = find(root, "case_insensitive");
        read_routes(*v, reg, ci != nullptr && need_bool(*ci, "case_insensitive"));
    } else if (const Json* ci = find(root, "case_insensitive")) {
        (void)need_bool(*ci, "case_insensitive");
    }
    if (const Json* v = find(root, "trusted_proxies")) read_trusted_proxies(*v, reg);

    if (const Json* v = find(root, "auth"); v != nullptr && !v->is_null()) {
        if (!v->is_object()) fail("auth", "expected a map with deny_status, got " + describe(*v));
        check_keys(*v, "auth", {"deny_status"});
        if (const Json* s = find(*v, "deny_status")) {
            reg.auth.deny_status = static_cast<int>(need_int(*s, "auth.deny_status", 400, 599));
        }
    }

    if (const Json* v = find(root, "hash_secret")) {
        // Never echo the value: it is a secret.
        if (!v->is_string()) {
            fail("hash_secret", "expected a string of at least 16 bytes, got " + type_name(*v));
        }
        const auto& secret = v->get_ref<const std::string&>();
        if (secret.size() < 16) {
            fail("hash_secret", "expected at least 16 bytes, got " + std::to_string(secret.size()));
        }
        reg.hash_secret = secret;
    }

    read_settings(root, cfg.settings);
    return cfg;
}

void Validator::read_policies(const Json& root, Registry& reg) const {
    const std::string expected = "a map of policy names to policies";
    const Json& v = require(root, "", "policies", expected);
    if (!v.is_object()) fail("policies", "expected " + expected + ", got " + describe(v));
    if (v.empty()) fail("policies", "expected at least one policy");
    for (const auto& [name, body] : v.items()) {
        const std::string path = join("policies", name);
        if (name == no_policy) {
            fail(path, "\"none\" is reserved for routes that are not limited; choose another name");
        }
        if (!check::is_valid_policy_name(name)) {
            fail(path, std::string("expected a policy name of ") + name_charset);
        }
        reg.policies.emplace(name, read_policy(name, body, path));
    }
}

Policy Validator::read_policy(const std::string& name, const Json& body,
                              const std::string& path) const {
    if (!body.is_object()) {
        fail(path, "expected a map with algorithm, limit and window, got " + describe(body));
    }
    check_keys(body, path,
               {"algorithm", "limit", "window", "burst", "windows", "on_store_error", "shadow", "long_ttl"});

    Policy p;
    p.name = name;

    const std::string alg_path = join(path, "algorithm");
    const std::string alg = need_one_of(
        require(body, path, "algorithm",
                "one of token_bucket, sliding_log, fixed_window, gcra, sliding_window"),
        alg_path, {"token_bucket", "sliding_log", "fixed_window", "gcra", "sliding_window"});
    p.algorithm = alg == "token_bucket"     ? Algorithm::token_bucket
                  : alg == "sliding_log"    ? Algorithm::sliding_log
                  : alg == "fixed_window"   ? Algorithm::fixed_window
                  : alg == "gcra"           ? Algorithm::gcra
                                            : Algorithm::sliding_window;

    if (const Json* v = find(body, "on_store_error")) {
        p.on_store_error =
            need_one_of(*v, join(path, "on_store_error"), {"allow", "deny"}) == "deny"
                ? OnStoreError::deny
                : OnStoreError::allow;
    }
    if (const Json* v = find(body, "shadow")) p.shadow = need_bool(*v, join(path, "shadow"));
    if (const Json* v = find(body, "long_ttl")) p.long_ttl = need_bool(*v, join(path, "long_ttl"));

    read_limits(body, path, p);
    check_long_windows(p, path);
    return p;
}

void Validator::read_limits(const Json& body, const std::string& path, Policy& p) const {
    const Json* windows = find(body, "windows");
    if (windows == nullptr) {
        read_window(body, path, p);
        return;
    }
    for (const char* single : {"limit", "window", "burst"}) {
        if (find(body, single) != nullptr) {
            fail(join(path, single), "not allowed with windows (each window has its own)");
        }
    }
    const std::string windows_path = join(path, "windows");
    const std::string expected = "a list of 2.." + std::to_string(max_policy_windows) +
                                 " windows such as {limit: 100, window: 1m}";
    if (!windows->is_array() || windows->size() < 2 || windows->size() > max_policy_windows) {
        fail(windows_path, "expected " + expected + ", got " +
                               (windows->is_array() ? std::to_string(windows->size()) + " windows"
                                                    : describe(*windows)));
    }
    p.windows.clear();
    std::size_t i = 0;
    for (const auto& item : *windows) {
        const std::string item_path = join(windows_path, i++);
        if (!item.is_object()) fail(item_path, "expected a map with limit and window, got " + describe(item));
        check_keys(item, item_path, {"limit", "window", "burst", "name"});
        Policy w;
        w.algorithm = p.algorithm;
        w.on_store_error = p.on_store_error;
        w.shadow = p.shadow;
        w.long_ttl = p.long_ttl;
        w.plan = p.plan;
        read_window(item, item_path, w);
        // The IETF item name: distinct per window, so clients can tell them apart.
        w.name = p.name + "-" + format_duration(w.window);
        if (const Json* n = find(item, "name")) {
            const std::string name_path = join(item_path, "name");
            const std::string name_expected = std::string("a window name of ") + name_charset;
            w.name = need_string(*n, name_path, name_expected);
            if (!check::is_valid_policy_name(w.name)) {
                fail(name_path, "expected " + name_expected + ", got " + describe(*n));
            }
        }
        for (std::size_t j = 0; j < p.windows.size(); ++j) {
            // Each window's key ends with its span: two equal spans would share one key.
            if (p.windows[j].window == w.window) {
                fail(join(item_path, "window"), "duplicate span " + format_duration(w.window) + " (" +
                                                    join("windows", j) + " has it too)");
            }
            if (p.windows[j].name == w.name) {
                fail(join(item_path, "name"), quote(w.name) + " is already the name of " + join("windows", j));
            }
        }
        p.windows.push_back(std::move(w));
    }
    const Policy& first = p.windows.front();
    p.limit = first.limit;
    p.window = first.window;
    p.burst = first.burst;
}

void Validator::check_long_windows(const Policy& p, const std::string& path) const {
    if (p.long_ttl) return;
    const auto check = [&](const Policy& w, const std::string& window_path) {
        if (w.window > std::chrono::hours(24)) {
            fail(window_path, "a window longer than 1d keeps its keys longer than a day (got " +
                                  format_duration(w.window) + "); set long_ttl: true on the policy to confirm");
        }
    };
    if (p.windows.empty()) {
        check(p, join(path, "window"));
        return;
    }
    for (std::size_t i = 0; i < p.windows.size(); ++i) {
        check(p.windows[i], join(join(join(path, "windows"), i), "window"));
    }
}

void Validator::read_window(const Json& body, const std::string& path, Policy& p) const {
    const std::string alg = to_string(p.algorithm);
    const std::string limit_range = "an integer 1.." + std::to_string(max_limit);
    const std::string limit_path = join(path, "limit");
    p.limit = need_int(require(body, path, "limit", limit_range), limit_path, 1, max_limit);

    const std::string window_path = join(path, "window");
    const Json& window = require(body, path, "window", duration_example);
    p.window = need_duration(window, window_path);
    if (p.window > max_window) fail(window_path, "expected at most 365d, got " + describe(window));

    p.burst = p.limit;
    if (const Json* v = find(body, "burst")) {
        const std::string burst_path = join(path, "burst");
        if (!p.has_burst()) {
            fail(burst_path,
                 std::string("only allowed with algorithm token_bucket or gcra, this policy uses ") + alg);
        }
        p.burst = need_int(*v, burst_path, 1, max_limit);
    }

    if (p.algorithm == Algorithm::sliding_log && p.limit > max_sliding_log_limit) {
        fail(limit_path,
             "expected at most " + std::to_string(max_sliding_log_limit) +
                 " for sliding_log (each admitted unit is one sorted-set member in Redis), got " +
                 std::to_string(p.limit));
    }
    if (p.has_burst() && p.burst > max_exact_double / p.window.count()) {
        // The Lua script scales tokens by milliseconds in doubles; beyond 2^53 it would round.
        fail(path,
             std::string("expected burst * window in ms <= 2^53 (9007199254740992) so the ") +
                 (p.algorithm == Algorithm::gcra ? "GCRA" : "token bucket") + " stays exact in Lua, got " +
                 std::to_string(p.burst) + " * " + std::to_string(p.window.count()));
    }
    if (p.algorithm == Algorithm::sliding_window && p.limit > max_exact_double / p.window.count()) {
        // The counts are weighted by milliseconds of the window in doubles; beyond 2^53 they round.
        fail(path,
             "expected limit * window in ms <= 2^53 (9007199254740992) so the sliding window stays "
             "exact in Lua, got " +
                 std::to_string(p.limit) + " * " + std::to_string(p.window.count()));
    }
}

void Validator::read_plans(const Json& v, Registry& reg) const {
    if (v.is_null()) return;
    const std::string expected = "a map of plan names to {policy: limits} maps";
    if (!v.is_object()) fail("plans", "expected " + expected + ", got " + describe(v));
    for (const auto& [plan_name, body] : v.items()) {
        const std::string path = join("plans", plan_name);
        if (!check::is_valid_policy_name(plan_name)) fail(path, std::string("expected a plan name of ") + name_charset);
        if (plan_name == tenant_override_label) {
            fail(path, "\"tenant\" is reserved (it marks a tenant's own overrides in keys); choose another name");
        }
        if (!body.is_object() || body.empty()) {
            fail(path, "expected a map of policy names to limits such as {api-default: {limit: 600, window: 1m}}, got " +
                           describe(body));
        }
        reg.plans.emplace(plan_name, Plan{read_variants(body, path, plan_name, reg)});
    }
}

void Validator::read_tenants(const Json& v, Registry& reg) const {
    if (v.is_null()) return;
    const std::string expected = "a map of tenant ids to {plan, overrides}";
    if (!v.is_object()) fail("tenants", "expected " + expected + ", got " + describe(v));
    for (const auto& [tenant, body] : v.items()) {
        const std::string path = join("tenants", tenant);
        if (const auto ok = check::validate_tenant(tenant); !ok) {
            std::string detail = ok.error().detail;
            if (detail.starts_with("tenant: ")) detail.erase(0, 8);
            fail(path, detail);
        }
        if (!body.is_object() || body.empty()) {
            fail(path, "expected a map with plan and/or overrides, got " + describe(body));
        }
        check_keys(body, path, {"plan", "overrides"});
        TenantSettings t;
        if (const Json* plan = find(body, "plan")) {
            const std::string plan_path = join(path, "plan");
            std::string name = need_string(*plan, plan_path, "a plan name");
            if (reg.plans.find(name) == reg.plans.end()) fail(plan_path, quote(name) + " is not a defined plan");
            t.plan = std::move(name);
        }
        if (const Json* overrides = find(body, "overrides")) {
            const std::string overrides_path = join(path, "overrides");
            if (!overrides->is_object() || overrides->empty()) {
                fail(overrides_path, "expected a map of policy names to limits, got " + describe(*overrides));
            }
            t.overrides = read_variants(*overrides, overrides_path, tenant_override_label, reg);
        }
        reg.tenants.emplace(tenant, std::move(t));
    }
}

std::map<std::string, Policy, std::less<>> Validator::read_variants(const Json& body, const std::string& path,
                                                                   const std::string& label,
                                                                   const Registry& reg) const {
    std::map<std::string, Policy, std::less<>> out;
    for (const auto& [policy_name, limits] : body.items()) {
        const std::string policy_path = join(path, policy_name);
        const Policy* base = reg.find(policy_name);
        if (base == nullptr) fail(policy_path, quote(policy_name) + " is not a defined policy");
        out.emplace(policy_name, read_variant(*base, label, limits, policy_path));
    }
    return out;
}

Policy Validator::read_variant(const Policy& base, const std::string& label, const Json& body,
                               const std::string& path) const {
    if (!body.is_object()) fail(path, "expected a map with limit and window, or windows, got " + describe(body));
    for (const char* inherited : {"algorithm", "on_store_error", "shadow", "long_ttl"}) {
        if (find(body, inherited) != nullptr) {
            fail(join(path, inherited), std::string("inherited from policies.") + path_segment(base.name) +
                                            "; a plan or override sets only limit, window, burst or windows");
        }
    }
    check_keys(body, path, {"limit", "window", "burst", "windows"});
    Policy p = base;
    p.plan = label;
    p.windows.clear();
    read_limits(body, path, p);
    check_long_windows(p, path);
    return p;
}

std::string Validator::read_route_path(const Json& item, const std::string& path) const {
    const std::string path_path = join(path, "path");
    const std::string path_expected = "a path starting with '/'";
    std::string text = need_string(require(item, path, "path", path_expected), path_path, path_expected);
    if (!text.starts_with('/')) fail(path_path, "expected " + path_expected + ", got " + quote(text));
    if (const auto star = text.find('*'); star != std::string::npos && star + 1 != text.size()) {
        fail(path_path, "expected '*' only at the end (a prefix match), got " + quote(text));
    }
    // Requests are matched in normal form; a pattern in another form could never match.
    if (const std::string normal = normalize_path(text); normal != text) {
        fail(path_path, "expected a normalised path (write " + quote(normal) + "), got " + quote(text));
    }
    return text;
}

std::string Validator::read_route_method(const Json& m, const std::string& method_path) const {
    const std::string expected = "an HTTP method such as GET or POST (letters only)";
    std::string method = need_string(m, method_path, expected);
    bool letters = !method.empty();
    for (char& c : method) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        letters = letters && c >= 'A' && c <= 'Z';
    }
    if (!letters) fail(method_path, "expected " + expected + ", got " + describe(m));
    return method;
}

void Validator::read_routes(const Json& v, Registry& reg, bool case_insensitive) const {
    if (v.is_null()) return;  // `routes:` with every entry commented out
    if (!v.is_array()) fail("routes", "expected a list of routes, got " + describe(v));
    std::size_t i = 0;
    for (const auto& item : v) {
        const std::string path = join("routes", i++);
        if (!item.is_object()) {
            fail(path, "expected a map with path and policy, got " + describe(item));
        }
        check_keys(item, path, {"method", "path", "policy", "limits", "scope", "case_insensitive"});

        Route r;
        r.path = read_route_path(item, path);
        r.case_insensitive = case_insensitive;
        if (const Json* ci = find(item, "case_insensitive")) {
            r.case_insensitive = need_bool(*ci, join(path, "case_insensitive"));
        }

        if (const Json* m = find(item, "method")) r.method = read_route_method(*m, join(path, "method"));

        const Json* limits = find(item, "limits");
        if (limits != nullptr) {
            if (find(item, "policy") != nullptr) {
                fail(path, "expected either policy or limits, not both");
            }
            read_route_limits(*limits, join(path, "limits"), reg, r);
        } else {
            const std::string policy_path = join(path, "policy");
            const std::string expected = "a policy name or \"none\", or limits: a list of limits";
            r.policy = need_string(require(item, path, "policy", expected), policy_path,
                                   "a policy name or \"none\"");
            if (r.policy != no_policy && reg.find(r.policy) == nullptr) {
                fail(policy_path, quote(r.policy) + " is not a defined policy");
            }
            if (r.policy != no_policy) r.limits.push_back(RouteLimit{r.policy, std::nullopt});
        }

        if (const Json* s = find(item, "scope")) {
            const std::string scope_path = join(path, "scope");
            std::string scope = need_string(*s, scope_path, "a scope such as POST_/v1/exports");
            if (const auto ok = check::validate_scope(scope); !ok) {
                // The detail starts with "scope: "; the field path replaces it.
                // error() returns by value: keep a copy, not a view into a temporary.
                std::string detail = ok.error().detail;
                if (detail.starts_with("scope: ")) detail.erase(0, 7);
                fail(scope_path, detail);
            }
            r.scope = std::move(scope);
        }
        reg.routes.push_back(std::move(r));
    }
}

void Validator::read_route_limits(const Json& v, const std::string& path, const Registry& reg,
                                  Route& r) const {
    const std::string expected = "a list of 1.." + std::to_string(max_route_limits) +
                                 " limits such as {policy: per-ip, identity: client_ip}";
    if (!v.is_array() || v.empty() || v.size() > max_route_limits) {
        fail(path, "expected " + expected + ", got " +
                       (v.is_array() ? std::to_string(v.size()) + " limits" : describe(v)));
    }
    std::size_t i = 0;
    for (const auto& item : v) {
        const std::string limit_path = join(path, i++);
        if (!item.is_object()) {
            fail(limit_path, "expected a map with policy [and identity], got " + describe(item));
        }
        check_keys(item, limit_path, {"policy", "identity"});

        RouteLimit limit;
        const std::string policy_path = join(limit_path, "policy");
        limit.policy = need_string(require(item, limit_path, "policy", "a policy name"),
                                   policy_path, "a policy name");
        if (limit.policy == no_policy) {
            fail(policy_path,
                 "\"none\" cannot be one of several limits; write policy: none for the route");
        }
        if (reg.find(limit.policy) == nullptr) {
            fail(policy_path, quote(limit.policy) + " is not a defined policy");
        }
        // One key per (policy, tenant): a policy twice would make the two limits one key.
        for (std::size_t j = 0; j < r.limits.size(); ++j) {
            if (r.limits[j].policy == limit.policy) {
                fail(policy_path, quote(limit.policy) + " is already " + join("limits", j) +
                                      "; a policy may appear once per route");
            }
        }

        if (const Json* id = find(item, "identity")) {
            const std::string id_path = join(limit_path, "identity");
            std::string name = need_string(*id, id_path, "the name of an identity source");
            bool known = name == client_ip_identity;
            std::string names = client_ip_identity;
            for (const auto& src : reg.identity) {
                if (src.name.empty() || src.name == client_ip_identity) continue;
                known = known || src.name == name;
                names += ", " + src.name;
            }
            if (!known) {
                fail(id_path, quote(name) + " is not the name of an identity source (known: " +
                                  names + ")");
            }
            limit.identity = std::move(name);
        }
        r.limits.push_back(std::move(limit));
    }
    r.policy = r.limits.front().policy;
}

void Validator::read_identity(const Json& v, Registry& reg) const {
    if (v.is_null()) return;
    if (!v.is_array()) fail("identity", "expected a list of identity sources, got " + describe(v));
    const std::string shape =
        "expected exactly one of {header: NAME [, hash: true|false]} or {client_ip: true}";
    std::size_t i = 0;
    for (const auto& item : v) {
        const std::string path = join("identity", i++);
        if (!item.is_object()) fail(path, shape + ", got " + describe(item));
        check_keys(item, path, {"header", "hash", "client_ip", "ipv4_prefix", "ipv6_prefix", "name"});
        const Json* header = find(item, "header");
        const Json* client_ip = find(item, "client_ip");
        const Json* hash = find(item, "hash");
        if ((header == nullptr) == (client_ip == nullptr)) fail(path, shape);

        IdentitySource src;
        if (client_ip != nullptr) {
            if (hash != nullptr) fail(join(path, "hash"), "only allowed with header");
            if (!client_ip->is_boolean() || !client_ip->get<bool>()) {
                fail(join(path, "client_ip"), "expected true, got " + describe(*client_ip));
            }
            src.kind = IdentitySource::Kind::client_ip;
            src.prefixes = read_client_ip_prefixes(item, path);
        } else {
            for (const char* key : {"ipv4_prefix", "ipv6_prefix"}) {
                if (find(item, key) != nullptr) fail(join(path, key), "only allowed with client_ip: true");
            }
            const std::string header_path = join(path, "header");
            const std::string expected = "a header name such as X-Tenant-Id";
            src.header = need_string(*header, header_path, expected);
            // RFC 9110 token characters: anything else can never name a received header.
            const bool token =
                !src.header.empty() && src.header.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789!#$%&'*+-.^_`|~") == std::string::npos;
            if (!token) fail(header_path, "expected " + expected + ", got " + describe(*header));
            if (hash != nullptr) src.hash = need_bool(*hash, join(path, "hash"));
        }

        read_identity_name(item, path, reg, src);
        if (src.name == client_ip_identity) reg.client_ip = src.prefixes;
        reg.identity.push_back(std::move(src));
    }
}

void Validator::read_identity_name(const Json& item, const std::string& path, const Registry& reg,
                                   IdentitySource& src) const {
    if (src.kind == IdentitySource::Kind::client_ip) src.name = client_ip_identity;
    if (const Json* name = find(item, "name")) {
        const std::string name_path = join(path, "name");
        const std::string expected = std::string("a name of ") + name_charset;
        std::string text = need_string(*name, name_path, expected);
        if (!check::is_valid_policy_name(text)) {
            fail(name_path, "expected " + expected + ", got " + describe(*name));
        }
        if (text == client_ip_identity && src.kind != IdentitySource::Kind::client_ip) {
            fail(name_path, "\"client_ip\" is reserved for the client address");
        }
        src.name = std::move(text);
    }
    for (std::size_t j = 0; j < reg.identity.size(); ++j) {
        // Also the implicit "client_ip": two such sources could group addresses two ways.
        if (!src.name.empty() && reg.identity[j].name == src.name) {
            fail(join(path, "name"), quote(src.name) + " is already the name of " + join("identity", j));
        }
    }
}

ClientIpPrefixes Validator::read_client_ip_prefixes(const Json& item, const std::string& path) const {
    namespace b = client_ip_bounds;
    ClientIpPrefixes p;
    if (const Json* v = find(item, "ipv4_prefix")) {
        p.ipv4 = static_cast<int>(need_int(*v, join(path, "ipv4_prefix"), b::ipv4_lo, b::ipv4_hi));
    }
    if (const Json* v = find(item, "ipv6_prefix")) {
        p.ipv6 = static_cast<int>(need_int(*v, join(path, "ipv6_prefix"), b::ipv6_lo, b::ipv6_hi));
    }
    return p;
}

void Validator::read_trusted_proxies(const Json& v, Registry& reg) const {
    if (v.is_null()) return;
    const std::string expected =
        "an IPv4 or IPv6 address or CIDR such as \"10.0.0.0/8\" or \"::1/128\"";
    if (!v.is_array()) fail("trusted_proxies", "expected a list of CIDRs, got " + describe(v));
    std::size_t i = 0;
    for (const auto& item : v) {
        const std::string path = join("trusted_proxies", i++);
        const auto net =
            item.is_string() ? parse_cidr(item.get_ref<const std::string&>()) : std::nullopt;
        if (!net) fail(path, "expected " + expected + ", got " + describe(item));
        reg.trusted_proxies.push_back(*net);
    }
}

/// "HOST:PORT" with an IPv6 host in brackets; port 0..65535 (0: pick a free port).
bool is_host_port(std::string_view s) {
    std::string_view host;
    std::string_view port;
    if (s.starts_with('[')) {
        const auto close = s.find("]:");
        if (close == std::string_view::npos) return false;
        host = s.substr(1, close - 1);
        port = s.substr(close + 2);
    } else {
        const auto colon = s.rfind(':');
        if (colon == std::string_view::npos) return false;
        host = s.substr(0, colon);
        port = s.substr(colon + 1);
        if (host.find(':') != std::string_view::npos) return false;  // unbracketed IPv6
    }
    if (host.empty() || host.find_first_of(" \t[]/") != std::string_view::npos) return false;
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string_view::npos) {
        return false;
    }
    return std::stoi(std::string(port)) <= 65535;
}

void Validator::read_settings(const Json& root, FileSettings& s) const {
    if (const Json* v = find(root, "listen")) {
        const std::string expected = "HOST:PORT such as \"127.0.0.1:8080\" or \"[::1]:8080\"";
        const std::string listen = need_string(*v, "listen", expected);
        if (!is_host_port(listen)) fail("listen", "expected " + expected + ", got " + describe(*v));
        s.listen = listen;
    }
    if (const Json* v = find(root, "redis")) {
        // The URL may carry a password: say what is wrong without echoing it.
        const std::string expected = "a URL such as \"redis://127.0.0.1:6379\"";
        if (!v->is_string()) fail("redis", "expected " + expected + ", got " + type_name(*v));
        const auto& url = v->get_ref<const std::string&>();
        if (!url.starts_with("redis://") && !url.starts_with("redis-sentinel://") &&
            !url.starts_with("redis-cluster://") && !url.starts_with("rediss://") &&
            !url.starts_with("rediss-sentinel://") && !url.starts_with("rediss-cluster://")) {
            fail("redis", "expected " + expected +
                             " (starting with \"redis://\", \"redis-sentinel://\" or \"redis-cluster://\", or \"rediss\" for TLS)");
        }
        s.redis = v->get<std::string>();
    }
    if (const Json* v = find(root, "threads")) {
        s.threads = static_cast<int>(need_int(*v, "threads", 1, 256));
    }
    if (const Json* v = find(root, "log_level")) {
        s.log_level = need_one_of(*v, "log_level", {"trace", "debug", "info", "warn", "error"});
    }
    if (const Json* v = find(root, "log_format")) {
        s.log_format = need_one_of(*v, "log_format", {"text", "json"});
    }
    if (const Json* v = find(root, "store_timeout")) {
        const auto d = need_duration(*v, "store_timeout");
        if (d < setting_bounds::store_timeout_lo || d > setting_bounds::store_timeout_hi) {
            fail("store_timeout", "expected a duration from 1ms to 1m, got " + describe(*v));
        }
        s.store_timeout = d;
    }
    if (const Json* v = find(root, "admin_token")) {
        // A secret: say what is wrong without echoing it.
        if (!v->is_string() || v->get_ref<const std::string&>().size() < 16) {
            fail("admin_token", "expected a string of at least 16 bytes");
        }
        s.admin_token = v->get<std::string>();
    }
    if (const Json* v = find(root, "access_log")) {
        s.access_log = need_one_of(*v, "access_log", {"off", "denied", "all"});
    }
    if (const Json* v = find(root, "access_log_sample")) {
        if (!v->is_number() || v->get<double>() < 0.0 || v->get<double>() > 1.0) {
            fail("access_log_sample", "expected a number from 0 to 1, got " + describe(*v));
        }
        s.access_log_sample = v->get<double>();
    }
    namespace b = setting_bounds;
    if (const Json* v = find(root, "max_connections")) {
        s.max_connections = need_int(*v, "max_connections", 1, b::max_connections_hi);
    }
    if (const Json* v = find(root, "max_requests_per_connection")) {
        s.max_requests_per_connection =
            need_int(*v, "max_requests_per_connection", 1, b::max_requests_per_connection_hi);
    }
    if (const Json* v = find(root, "request_timeout")) {
        const auto d = need_duration(*v, "request_timeout");
        if (d < b::request_timeout_lo || d > b::request_timeout_hi) {
            fail("request_timeout", "expected a duration from 100ms to 10m, got " + describe(*v));
        }
        s.request_timeout = d;
    }
    if (const Json* v = find(root, "memory_max_keys")) {
        // 0 is "no cap"; below one key per shard of the embedded store a cap means nothing.
        const bool zero = v->is_number_integer() && v->get<std::int64_t>() == 0;
        const bool in_range = v->is_number_integer() && v->get<std::int64_t>() >= b::memory_max_keys_lo &&
                              v->get<std::int64_t>() <= b::memory_max_keys_hi;
        if (!zero && !in_range) {
            fail("memory_max_keys", "expected 0 (no cap) or an integer " + std::to_string(b::memory_max_keys_lo) +
                                        ".." + std::to_string(b::memory_max_keys_hi) + ", got " + describe(*v));
        }
        s.memory_max_keys = v->get<std::int64_t>();
    }
    for (auto [key, field] : {std::pair{"redis_tls_ca", &s.redis_tls_ca}, std::pair{"redis_tls_cert", &s.redis_tls_cert},
                              std::pair{"redis_tls_key", &s.redis_tls_key},
                              std::pair{"redis_tls_server_name", &s.redis_tls_server_name}}) {
        if (const Json* v = find(root, key)) *field = need_string(*v, key, "a file path or host name");
    }
    if (const Json* v = find(root, "redis_tls_insecure_skip_verify")) {
        s.redis_tls_insecure_skip_verify = need_bool(*v, "redis_tls_insecure_skip_verify");
    }
}

}  // namespace

namespace {

std::string sha256_hex(std::string_view text) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : digest) {
        out.push_back(hex[b >> 4]);
        out.push_back(hex[b & 0xf]);
    }
    return out;
}

}  // namespace

Config parse_config(std::string_view text, const std::string& file_name) {
    const Json tree = read_config_tree(text, file_name);
    Config config;
    try {
        config = Validator(file_name).run(tree);
    } catch (const ConfigError&) {
        throw;
    } catch (const std::exception&) {
        // A library call inside validation threw: refuse the file rather than end a reload.
        throw ConfigError(file_name + ": cannot be validated: unexpected internal failure");
    }
    // What /v1/policies reports, so an operator can tell which file version is in force.
    config.registry.source_sha256 = sha256_hex(text);
    config.registry.loaded_at_epoch_s = static_cast<std::int64_t>(std::time(nullptr));
    return config;
}

Config load_config(const std::string& path) {
    const auto cannot_read = [&](int err) {
        return ConfigError(path + ": cannot read: " + std::generic_category().message(err));
    };
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw cannot_read(errno);

    std::string text;
    char buf[64 * 1024];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            throw cannot_read(err);
        }
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > reader_bounds::max_document_bytes) {
            ::close(fd);
            throw ConfigError(path + ": cannot read: larger than 16 MiB");
        }
    }
    ::close(fd);
    return parse_config(text, path);
}

}  // namespace ratelimitd::policy
