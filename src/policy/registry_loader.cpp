// The registry of a config file: its top-level keys checked, each section read by its own
// validator, the process settings handed to the settings table (config/resolve.hpp).
#include "ratelimitd/policy/registry_loader.hpp"

#include "ratelimitd/policy/validate.hpp"
#include "ratelimitd/config/resolve.hpp"
#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/hex.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/envoy_config_section.hpp"
#include "ratelimitd/policy/identity_section.hpp"
#include "ratelimitd/policy/limits_section.hpp"
#include "ratelimitd/policy/notify_section.hpp"
#include "ratelimitd/policy/registry_reader.hpp"
#include "ratelimitd/policy/rlqs_section.hpp"
#include "ratelimitd/policy/routes_section.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

#include <openssl/sha.h>

#include <nlohmann/json.hpp>

#include <ctime>
#include <string_view>
#include <vector>

namespace ratelimitd::policy {
namespace {

using Json = ConfigTree;
using config::describe;
using config::type_name;

// The registry's own top-level keys; the process settings' keys follow, from the table.
constexpr std::string_view registry_keys[] = {
    "prefix", "default_policy", "policies", "plans", "tenants", "routes", "case_insensitive", "identity",
    "trusted_proxies", "auth", "domains", "envoy_config", "envoy_denied_calls", "envoy_merge_domains",
    "notify", "rlqs", "hash_secret"};

std::vector<std::string_view> top_level_keys() {
    std::vector<std::string_view> keys(std::begin(registry_keys), std::end(registry_keys));
    for (const auto key : config::file_setting_keys()) keys.push_back(key);
    return keys;
}

/// The top level of the file: the registry's scalar keys here, its sections in their files.
class RegistryValidator : SchemaChecks {
public:
    RegistryValidator(const std::string& file, const LoadOptions& options) : SchemaChecks(file), options_(options) {}

    Config run(const Json& root) const;

private:
    void read_prefix(const Json& root, Registry& reg) const;
    void read_default_policy(const Json& root, Registry& reg) const;
    void read_routes(const Json& root, Registry& reg) const;
    void read_auth(const Json& root, Registry& reg) const;
    void read_hash_secret(const Json& root, Registry& reg) const;
    FileSettings read_process_settings(const Json& root) const;
    /// Whether the Envoy domains come from xds_server (the options, or the file's own key).
    bool rules_from_xds(const Json& root) const;

    const LoadOptions& options_;
};

Config RegistryValidator::run(const Json& root) const {
    if (!root.is_object()) {
        fail("", "expected a map of settings (at least \"policies\"), got " + describe(root));
    }
    check_keys(root, "", top_level_keys());

    Config cfg;
    Registry& reg = cfg.registry;
    reg.source_file = file();
    read_prefix(root, reg);
    const LimitsSection limits(file());
    const bool from_xds = rules_from_xds(root);
    if (from_xds && EnvoyConfigSection::present(root)) {
        fail(find(root, "domains") != nullptr ? "domains" : "envoy_config",
             "not allowed with xds_server (the Envoy domains come from the control plane)");
    }
    // A file of Envoy rules only (envoy_config:, domains:, xds_server or rlqs:) needs no policies of its own.
    const bool envoy_only = from_xds || EnvoyConfigSection::present(root) || find(root, "rlqs") != nullptr;
    if (find(root, "policies") != nullptr || !envoy_only) {
        limits.read_policies(root, reg);
    }
    read_default_policy(root, reg);
    if (const Json* v = find(root, "plans")) limits.read_plans(*v, reg);
    if (const Json* v = find(root, "tenants")) limits.read_tenants(*v, reg);
    // After every version of a policy exists: each gets the policy's thresholds.
    const bool domains_follow = !from_xds && EnvoyConfigSection::present(root);
    if (const Json* v = find(root, "notify")) NotifySection(file()).read(*v, reg, domains_follow, from_xds);

    const IdentitySection identity(file());
    // Identity first: route limits name identity sources.
    if (const Json* v = find(root, "identity")) identity.read_identity(*v, reg);
    read_routes(root, reg);
    if (const Json* v = find(root, "trusted_proxies")) identity.read_trusted_proxies(*v, reg);
    read_auth(root, reg);
    read_hash_secret(root, reg);
    EnvoyConfigSection envoy(file());
    envoy.read(root, reg, from_xds);
    if (const Json* v = find(root, "rlqs")) RlqsSection(file()).read(*v, reg);
    // Thresholds of Envoy domain rules, by label: after the domains exist.
    if (const Json* v = find(root, "notify"); v != nullptr && domains_follow) NotifySection(file()).read_domain_rules(*v, reg);

    cfg.settings = read_process_settings(root);
    return cfg;
}

bool RegistryValidator::rules_from_xds(const Json& root) const {
    if (options_.envoy_rules_from_xds) return true;
    const Json* v = find(root, "xds_server");
    return v != nullptr && !v->is_null();
}

void RegistryValidator::read_prefix(const Json& root, Registry& reg) const {
    if (const Json* v = find(root, "prefix")) {
        // The prefix shares the policy-name alphabet, which has no ':' (docs/configuration.md).
        reg.prefix = need_string(*v, "prefix", std::string("a key prefix of ") + name_charset);
        if (!policy::is_valid_policy_name(reg.prefix)) {
            fail("prefix", std::string("expected ") + name_charset + ", got " + describe(*v));
        }
    }
}

void RegistryValidator::read_default_policy(const Json& root, Registry& reg) const {
    if (const Json* v = find(root, "default_policy")) {
        const std::string name = need_string(*v, "default_policy", "a policy name");
        if (reg.find(name) == nullptr) {
            fail("default_policy", quote(name) + " is not a defined policy");
        }
        reg.default_policy = name;
    }
}

void RegistryValidator::read_routes(const Json& root, Registry& reg) const {
    const Json* ci = find(root, "case_insensitive");
    if (const Json* v = find(root, "routes")) {
        RoutesSection(file()).read_routes(*v, reg, ci != nullptr && need_bool(*ci, "case_insensitive"));
    } else if (ci != nullptr) {
        (void)need_bool(*ci, "case_insensitive");
    }
}

void RegistryValidator::read_auth(const Json& root, Registry& reg) const {
    if (const Json* v = find(root, "auth"); v != nullptr && !v->is_null()) {
        if (!v->is_object()) fail("auth", "expected a map with deny_status, got " + describe(*v));
        check_keys(*v, "auth", {"deny_status"});
        if (const Json* s = find(*v, "deny_status")) {
            reg.auth.deny_status = static_cast<int>(need_int(*s, "auth.deny_status", 400, 599));
        }
    }
}

void RegistryValidator::read_hash_secret(const Json& root, Registry& reg) const {
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
}

FileSettings RegistryValidator::read_process_settings(const Json& root) const {
    auto settings = config::read_file_settings(root);
    // The detail is "<key>: <what>", the path and message of any other field.
    if (!settings) throw ConfigError(file() + ": " + settings.error().detail);
    return std::move(*settings);
}

}  // namespace

namespace {

std::string sha256_hex(std::string_view text) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    return to_hex(std::span<const unsigned char>(digest));
}

}  // namespace

Config parse_config(std::string_view text, const std::string& file_name, const LoadOptions& options) {
    const Json tree = read_config_tree(text, file_name);
    Config config;
    try {
        config = RegistryValidator(file_name, options).run(tree);
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

Config load_config(const std::string& path, const LoadOptions& options) {
    return parse_config(read_config_file(path), path, options);
}

}  // namespace ratelimitd::policy
