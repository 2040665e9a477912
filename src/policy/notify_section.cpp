// `notify:` read into NotifySettings and NotifyRules, and the rules hung on their policies.
#include "ratelimitd/policy/notify_section.hpp"

#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/notify_domain_rules.hpp"
#include "ratelimitd/policy/validate.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

namespace ratelimitd::policy {

namespace {

using config::describe;
using config::type_name;

constexpr std::size_t min_secret_bytes = 16;
constexpr std::chrono::milliseconds max_timeout{60'000};

/// Every Policy object named `name`: the registry's, each plan's and each tenant override's,
/// with their windows.
template <class Visit>
void for_each_version(Registry& reg, const std::string& name, Visit visit) {
    const auto visit_with_windows = [&visit](Policy& p) {
        visit(p);
        for (auto& w : p.windows) visit(w);
    };
    if (auto it = reg.policies.find(name); it != reg.policies.end()) visit_with_windows(it->second);
    for (auto& [plan_name, plan] : reg.plans) {
        if (auto it = plan.policies.find(name); it != plan.policies.end()) visit_with_windows(it->second);
    }
    for (auto& [tenant, settings] : reg.tenants) {
        if (auto it = settings.overrides.find(name); it != settings.overrides.end()) visit_with_windows(it->second);
    }
}

}  // namespace

std::int64_t threshold_units(double fraction, std::int64_t limit) noexcept {
    if (fraction >= 1.0) return 0;
    const auto units = static_cast<std::int64_t>(std::ceil(fraction * static_cast<double>(limit)));
    return std::clamp<std::int64_t>(units, 1, std::max<std::int64_t>(1, limit));
}

std::string threshold_spec(const NotifyRule& rule, std::int64_t limit) {
    std::string spec;
    for (const double f : rule.at) {
        if (!spec.empty()) spec += ',';
        spec += std::to_string(threshold_units(f, limit));
    }
    return spec;
}

std::string debt_spec(const NotifyRule& rule) {
    return rule.debt > 0 ? "debt:" + std::to_string(rule.debt) : std::string();
}

std::string report_spec(const NotifyRule& rule, std::int64_t limit) {
    if (rule.at.empty() && rule.debt <= 0) return {};
    return threshold_spec(rule, limit) + ";" + debt_spec(rule);
}

void NotifySection::read(const ConfigTree& v, Registry& reg, bool domain_rules_follow, bool rules_from_xds) const {
    if (v.is_null()) return;
    if (!v.is_object()) fail("notify", "expected a map with targets and policies, got " + describe(v));
    check_keys(v, "notify", {"targets", "policies"});
    auto settings = std::make_shared<NotifySettings>();
    const ConfigTree& targets = require(v, "notify", "targets", "a map of webhook targets");
    if (!targets.is_object() || targets.empty()) {
        fail("notify.targets", "expected a map of at least one target {url, secret, timeout}, got " +
                                   describe(targets));
    }
    for (const auto& [name, body] : targets.items()) {
        const std::string path = join("notify.targets", name);
        if (!is_valid_policy_name(name)) fail(path, std::string("expected a target name of ") + name_charset);
        settings->targets.emplace(name, read_target(body, path, name));
    }
    if (const ConfigTree* policies = find(v, "policies"); policies != nullptr && !policies->is_null()) {
        if (!policies->is_object()) {
            fail("notify.policies", "expected a map of policy names to {at, target}, got " + describe(*policies));
        }
        for (const auto& [name, body] : policies->items()) {
            const std::string path = join("notify.policies", name);
            const Policy* p = reg.find(name);
            if (p == nullptr && domain_rules_follow) continue;  // read_domain_rules, once they are read
            if (p == nullptr && rules_from_xds) {
                // A label of the control plane's rules: no max_debt known yet, so no debt bound.
                if (body.is_object() && find(body, "debt") != nullptr) {
                    fail(path + ".debt", "no debt bound on a rule the xDS control plane sends (its max_debt is not known "
                                         "at load)");
                }
                settings->xds_labels.emplace(name, read_rule(body, path, name, *settings, 0));
                continue;
            }
            if (p == nullptr) fail(path, quote(name) + " is not a defined policy");
            // A concurrency policy's thresholds are leases held (N of `limit`), claimed once per
            // aligned window of its `lease:` length (docs/operations.md, "Concurrency leases").
            if (traits(p->algorithm).leases && body.is_object() && find(body, "debt") != nullptr) {
                fail(path + ".debt", "a concurrency policy takes no reports, so it never holds debt");
            }
            // A report never leaves more debt than the deepest bound of the policy's versions.
            std::int64_t deepest = 0;
            for_each_version(reg, name,
                             [&deepest](Policy& version) { deepest = std::max(deepest, version.debt_bound()); });
            auto rule = read_rule(body, path, name, *settings, deepest);
            for_each_version(reg, name, [&rule](Policy& version) { version.notify = rule; });
        }
    }
    reg.notify = std::move(settings);
}

void NotifySection::read_domain_rules(const ConfigTree& v, Registry& reg) const {
    const ConfigTree* policies = find(v, "policies");
    if (policies == nullptr || !policies->is_object() || !reg.notify) return;
    std::shared_ptr<RlsDomains> domains = reg.domains ? std::make_shared<RlsDomains>(*reg.domains) : nullptr;
    for (const auto& [name, body] : policies->items()) {
        if (reg.find(name) != nullptr) continue;  // a policy's: read()
        const std::string path = join("notify.policies", name);
        const std::int64_t deepest = domains ? deepest_debt_of_domain_rules(*domains, name) : 0;
        auto rule = read_rule(body, path, name, *reg.notify, deepest);
        if (!domains || !attach_notify_to_domain_rules(*domains, name, rule)) {
            fail(path, quote(name) + " is not a defined policy or the label of a limited Envoy domain rule");
        }
    }
    if (domains) reg.domains = std::move(domains);
}

std::shared_ptr<const NotifyTarget> NotifySection::read_target(const ConfigTree& v, const std::string& path,
                                                               const std::string& name) const {
    if (!v.is_object()) fail(path, "expected a map {url, secret, timeout}, got " + describe(v));
    check_keys(v, path, {"url", "secret", "timeout", "ca_file"});
    auto t = std::make_shared<NotifyTarget>();
    t->name = name;
    read_url(require(v, path, "url", "an http:// or https:// URL"), path + ".url", *t);
    if (const ConfigTree* ca = find(v, "ca_file")) {
        if (!t->tls) fail(path + ".ca_file", "only allowed with an https:// URL");
        t->ca_file = need_string(*ca, path + ".ca_file", "a PEM file of CA certificates");
        // Read at load, so a missing file is a config error rather than every event failing.
        if (!std::ifstream(t->ca_file).good()) fail(path + ".ca_file", "cannot read " + quote(t->ca_file));
    }
    // Never echo the value: it is a secret.
    const ConfigTree& secret = require(v, path, "secret", "a string of at least 16 bytes");
    if (!secret.is_string()) fail(path + ".secret", "expected a string of at least 16 bytes, got " + type_name(secret));
    t->secret = secret.get_ref<const std::string&>();
    if (t->secret.size() < min_secret_bytes) {
        fail(path + ".secret", "expected at least 16 bytes, got " + std::to_string(t->secret.size()));
    }
    t->signer.emplace(t->secret);
    if (const ConfigTree* timeout = find(v, "timeout")) {
        t->timeout = need_duration(*timeout, path + ".timeout");
        if (t->timeout.count() < 1 || t->timeout > max_timeout) {
            fail(path + ".timeout", "expected a duration from 1ms to 60s, got " + describe(*timeout));
        }
    }
    return t;
}

void NotifySection::read_url(const ConfigTree& v, const std::string& path, NotifyTarget& t) const {
    t.url = need_string(v, path, "an http:// or https:// URL");
    t.tls = t.url.rfind("https://", 0) == 0;
    const std::string_view scheme = t.tls ? "https://" : "http://";
    if (t.url.rfind(scheme, 0) != 0) fail(path, "expected an http:// or https:// URL, got " + quote(t.url));
    const std::string rest = t.url.substr(scheme.size());
    const auto slash = rest.find_first_of("/?");
    const std::string authority = rest.substr(0, slash);
    t.target = slash == std::string::npos ? "/" : rest.substr(slash);
    if (t.target.front() == '?') t.target.insert(0, "/");
    if (authority.find('@') != std::string::npos) {
        // user:password@ would put a credential into logs and /v1/policies: the secret signs instead.
        fail(path, "expected no user or password in the URL (the secret signs the events)");
    }
    if (t.target.find_first_of(" \r\n\t#") != std::string::npos) fail(path, "expected a path without spaces or '#'");
    std::string host = authority;
    std::string port = t.tls ? "443" : "80";
    if (!host.empty() && host.front() == '[') {
        const auto close = host.find(']');
        if (close == std::string::npos) fail(path, "expected ']' after an IPv6 address in " + quote(t.url));
        if (close + 1 < host.size()) {
            if (host[close + 1] != ':') fail(path, "expected ':' and a port after ']' in " + quote(t.url));
            port = host.substr(close + 2);
        }
        host = host.substr(1, close - 1);
    } else if (const auto colon = host.rfind(':'); colon != std::string::npos) {
        port = host.substr(colon + 1);
        host.resize(colon);
    }
    if (host.empty()) fail(path, "expected a host in " + quote(t.url));
    const bool numeric = !port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos;
    if (!numeric || std::stoi(port) < 1 || std::stoi(port) > 65535) {
        fail(path, "expected a port from 1 to 65535 in " + quote(t.url));
    }
    t.host = host;
    t.port = port;
}

std::shared_ptr<const NotifyRule> NotifySection::read_rule(const ConfigTree& v, const std::string& path,
                                                           const std::string& name,
                                                           const NotifySettings& settings,
                                                           std::int64_t deepest_debt) const {
    if (!v.is_object()) fail(path, "expected a map {at: [fractions], debt: units, target: NAME}, got " + describe(v));
    check_keys(v, path, {"at", "debt", "target"});
    auto rule = std::make_shared<NotifyRule>();
    rule->policy = name;
    if (const ConfigTree* debt = find(v, "debt")) rule->debt = read_debt(*debt, path + ".debt", deepest_debt);
    if (rule->debt == 0 || find(v, "at") != nullptr) read_thresholds(v, path, *rule);
    const std::string target = need_string(require(v, path, "target", "a target name"), path + ".target",
                                           "a target name");
    const auto it = settings.targets.find(target);
    if (it == settings.targets.end()) fail(path + ".target", quote(target) + " is not a target under notify.targets");
    rule->target = it->second;
    return rule;
}

std::int64_t NotifySection::read_debt(const ConfigTree& v, const std::string& path, std::int64_t deepest) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1) {
        fail(path, "expected a positive whole number of units of debt (a report's, past the limit), got " +
                       describe(v));
    }
    const std::int64_t bound = v.get<std::int64_t>();
    if (bound > deepest) {
        fail(path, "expected at most the policy's max_debt (" + std::to_string(deepest) +
                       " units: no report leaves more debt), got " + std::to_string(bound));
    }
    return bound;
}

void NotifySection::read_thresholds(const ConfigTree& v, const std::string& path, NotifyRule& rule) const {
    const ConfigTree& at = require(v, path, "at", "a list of fractions of the limit, e.g. [0.8, 1.0], or a debt bound");
    if (!at.is_array() || at.empty() || at.size() > max_notify_thresholds) {
        fail(path + ".at", "expected a list of 1 to " + std::to_string(max_notify_thresholds) +
                               " fractions of the limit (0 < f <= 1; 1.0: the first denial), got " + describe(at));
    }
    for (std::size_t i = 0; i < at.size(); ++i) {
        const ConfigTree& f = at[i];
        const bool number = f.is_number();
        const double x = number ? f.get<double>() : 0.0;
        if (!number || !(x > 0.0 && x <= 1.0)) {
            fail(join(path + ".at", i), "expected a fraction of the limit, 0 < f <= 1, got " + describe(f));
        }
        if (std::find(rule.at.begin(), rule.at.end(), x) != rule.at.end()) {
            fail(join(path + ".at", i), "duplicate threshold " + describe(f));
        }
        rule.at.push_back(x);
    }
}

}  // namespace ratelimitd::policy
