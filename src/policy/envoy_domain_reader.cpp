// One envoyproxy/ratelimit config document, read as its own loader reads it (same keys, same
// refusals: empty key, unknown unit, a unit beside `unlimited`, duplicate key/value, an empty
// or self-naming `replaces`), plus ratelimitd's `algorithm` and `on_store_error`.
#include "ratelimitd/policy/envoy_domain_reader.hpp"

#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/policy/window_limits.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <utility>

namespace ratelimitd::policy {
namespace {

using config::describe;

/// The units as the config writes them, in the order messages list them.
constexpr std::pair<std::string_view, RlsUnit> unit_words[] = {
    {"second", RlsUnit::second}, {"minute", RlsUnit::minute}, {"hour", RlsUnit::hour}, {"day", RlsUnit::day},
    {"week", RlsUnit::week},     {"month", RlsUnit::month},   {"year", RlsUnit::year}};
constexpr const char* unit_list = "second, minute, hour, day, week, month, year";
// A rule's algorithm when it names none: a fixed window, aligned to Envoy's unit.
constexpr Algorithm default_algorithm = Algorithm::fixed_window;

bool any_share_threshold(const RlsLevel& level) {
    return std::any_of(level.rules.begin(), level.rules.end(),
                       [](const RlsRule& r) { return r.share_threshold || any_share_threshold(r.children); });
}

bool any_value_to_metric(const RlsLevel& level) {
    return std::any_of(level.rules.begin(), level.rules.end(),
                       [](const RlsRule& r) { return r.value_to_metric || any_value_to_metric(r.children); });
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

}  // namespace

std::string EnvoyDomainReader::scalar_text(const Json& v, const std::string& path, const std::string& what) const {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer() || v.is_boolean()) return v.dump();
    fail(path, "expected " + what + " (text), got " + describe(v));
}

RlsDomain EnvoyDomainReader::read(const Json& doc, const std::string& path) const {
    if (!doc.is_object()) fail(path, "expected a map with domain and descriptors, got " + describe(doc));
    check_keys(doc, path, {"domain", "descriptors"});
    RlsDomain d;
    d.source_file = file();
    const std::string domain_path = join(path, "domain");
    d.name = scalar_text(require(doc, path, "domain", "a domain name"), domain_path, "a domain name");
    if (d.name.empty() || d.name.size() > envoy_bounds::max_part_bytes) {
        fail(domain_path, "expected 1.." + std::to_string(envoy_bounds::max_part_bytes) + " bytes, got " +
                              std::to_string(d.name.size()));
    }
    if (const Json* list = find(doc, "descriptors"); list != nullptr && !list->is_null()) {
        read_level(*list, join(path, "descriptors"), RulePath{escape_label_part(d.name), escape_key_part(d.name)}, 1,
                   d.root);
    }
    d.shares_threshold = any_share_threshold(d.root);
    d.values_in_stats = any_value_to_metric(d.root);
    return d;
}

void EnvoyDomainReader::read_level(const Json& list, const std::string& path, const RulePath& parent,
                                   std::size_t depth, RlsLevel& level) const {
    if (!list.is_array()) fail(path, "expected a list of descriptors such as {key: k, value: v}, got " + describe(list));
    if (depth > envoy_bounds::max_depth) {
        fail(path, "descriptors nest deeper than " + std::to_string(envoy_bounds::max_depth) + " levels");
    }
    level.rules.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
        level.rules.push_back(read_rule(list[i], join(path, i), parent, depth));
        index_rule(level, i, path);
    }
}

RlsRule EnvoyDomainReader::read_rule(const Json& item, const std::string& path, const RulePath& parent,
                                     std::size_t depth) const {
    if (!item.is_object()) fail(path, "expected a map with key (and value, rate_limit, descriptors), got " + describe(item));
    check_keys(item, path,
               {"key", "value", "rate_limit", "descriptors", "shadow_mode", "detailed_metric", "quota_mode", "metadata",
                "value_to_metric", "share_threshold", "algorithm", "on_store_error"});
    RlsRule rule;
    read_match(item, path, rule);
    rule.label = parent.label + "." + escape_label_part(rule.key);
    rule.key_name = parent.key_name + "." + escape_key_part(rule.key);
    if (rule.match != RlsRule::ValueMatch::any) {
        rule.label += "_" + escape_label_part(rule.value);
        rule.key_name += "_" + escape_key_part(rule.value);
    }
    if (const Json* v = find(item, "rate_limit"); v != nullptr && !v->is_null()) {
        read_rate_limit(*v, join(path, "rate_limit"), rule);
    }
    bool shadow = false;
    if (const Json* v = find(item, "shadow_mode")) shadow = need_bool(*v, join(path, "shadow_mode"));
    if (const Json* v = find(item, "detailed_metric")) rule.detailed_metric = need_bool(*v, join(path, "detailed_metric"));
    if (const Json* v = find(item, "quota_mode")) rule.quota_mode = need_bool(*v, join(path, "quota_mode"));
    if (const Json* v = find(item, "value_to_metric")) rule.value_to_metric = need_bool(*v, join(path, "value_to_metric"));
    read_share_threshold(item, path, rule);
    if (const Json* v = find(item, "metadata"); v != nullptr && !v->is_object() && !v->is_null()) {
        fail(join(path, "metadata"), "expected a map, got " + describe(*v));
    }
    build_policy(item, path, rule);
    rule.policy.shadow = shadow;
    if (const Json* list = find(item, "descriptors"); list != nullptr && !list->is_null()) {
        read_level(*list, join(path, "descriptors"), RulePath{rule.label, rule.key_name}, depth + 1, rule.children);
    }
    return rule;
}

void EnvoyDomainReader::read_share_threshold(const Json& item, const std::string& path, RlsRule& rule) const {
    const Json* v = find(item, "share_threshold");
    if (v == nullptr || !need_bool(*v, join(path, "share_threshold"))) return;
    // As envoyproxy/ratelimit refuses it: only a wildcard has values to share one counter.
    if (rule.match != RlsRule::ValueMatch::wildcard) {
        fail(join(path, "share_threshold"), "only allowed with a wildcard value (one holding a '*'), key " +
                                                quote(rule.key) + " has " +
                                                (rule.value.empty() ? std::string("none") : quote(rule.value)));
    }
    rule.share_threshold = true;
}

void EnvoyDomainReader::read_match(const Json& item, const std::string& path, RlsRule& rule) const {
    const std::string key_path = join(path, "key");
    rule.key = scalar_text(require(item, path, "key", "a descriptor key"), key_path, "a descriptor key");
    if (rule.key.empty()) fail(key_path, "expected a descriptor key, got an empty one");
    if (rule.key.size() > envoy_bounds::max_part_bytes) {
        fail(key_path, "expected at most " + std::to_string(envoy_bounds::max_part_bytes) + " bytes");
    }
    const Json* v = find(item, "value");
    if (v == nullptr || v->is_null()) return;
    const std::string value_path = join(path, "value");
    rule.value = scalar_text(*v, value_path, "a descriptor value");
    if (rule.value.size() > envoy_bounds::max_part_bytes) {
        fail(value_path, "expected at most " + std::to_string(envoy_bounds::max_part_bytes) + " bytes");
    }
    // envoyproxy/ratelimit treats an empty value as no value, and a '*' anywhere as a wildcard.
    if (rule.value.empty()) return;
    if (rule.value.find('*') != std::string::npos) {
        rule.match = RlsRule::ValueMatch::wildcard;
        rule.wildcard.emplace(rule.value);
    } else {
        rule.match = RlsRule::ValueMatch::exact;
    }
}

void EnvoyDomainReader::read_rate_limit(const Json& v, const std::string& path, RlsRule& rule) const {
    if (!v.is_object()) fail(path, "expected a map with unit and requests_per_unit, got " + describe(v));
    check_keys(v, path, {"unit", "requests_per_unit", "unlimited", "name", "replaces"});
    bool unlimited = false;
    if (const Json* u = find(v, "unlimited")) unlimited = need_bool(*u, join(path, "unlimited"));
    const Json* unit = find(v, "unit");
    const std::string unit_path = join(path, "unit");
    if (unlimited && unit != nullptr) fail(unit_path, "not allowed with unlimited: true (an unlimited rule has no unit)");
    if (!unlimited) {
        if (unit == nullptr) fail(unit_path, std::string("missing (expected one of ") + unit_list + ")");
        if (!unit->is_string()) fail(unit_path, std::string("expected one of ") + unit_list + ", got " + describe(*unit));
        // envoyproxy/ratelimit reads the unit in any case ("SECOND", "Second").
        const std::string word = lower(unit->get<std::string>());
        const auto* found = std::find_if(std::begin(unit_words), std::end(unit_words),
                                         [&](const auto& w) { return w.first == word; });
        if (found == std::end(unit_words)) {
            fail(unit_path, std::string("expected one of ") + unit_list + ", got " + describe(*unit));
        }
        rule.unit = found->second;
        const std::string rpu_path = join(path, "requests_per_unit");
        const Json* rpu = find(v, "requests_per_unit");
        // As in envoyproxy/ratelimit, a missing count is 0: every request is over the limit.
        if (rpu != nullptr) {
            rule.requests_per_unit =
                static_cast<std::uint32_t>(need_int(*rpu, rpu_path, 0, envoy_bounds::max_requests_per_unit));
        }
    } else if (const Json* rpu = find(v, "requests_per_unit")) {
        (void)need_int(*rpu, join(path, "requests_per_unit"), 0, envoy_bounds::max_requests_per_unit);
    }
    rule.limit = unlimited ? RlsRule::Limit::unlimited : RlsRule::Limit::limited;
    if (const Json* n = find(v, "name"); n != nullptr && !n->is_null()) {
        rule.limit_name = need_string(*n, join(path, "name"), "a limit name");
    }
    if (const Json* r = find(v, "replaces"); r != nullptr && !r->is_null()) read_replaces(*r, join(path, "replaces"), rule);
}

void EnvoyDomainReader::read_replaces(const Json& v, const std::string& path, RlsRule& rule) const {
    if (!v.is_array()) fail(path, "expected a list of {name: limit name}, got " + describe(v));
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string item_path = join(path, i);
        if (!v[i].is_object()) fail(item_path, "expected a map {name: limit name}, got " + describe(v[i]));
        check_keys(v[i], item_path, {"name"});
        const std::string name_path = join(item_path, "name");
        std::string name = need_string(require(v[i], item_path, "name", "a limit name"), name_path, "a limit name");
        if (name.empty()) fail(name_path, "expected a limit name, got an empty one");
        if (name == rule.limit_name) fail(name_path, "a limit cannot replace itself (" + quote(name) + " is its own name)");
        rule.replaces.push_back(std::move(name));
    }
}

void EnvoyDomainReader::build_policy(const Json& item, const std::string& path, RlsRule& rule) const {
    const Json* alg = find(item, "algorithm");
    const Json* ose = find(item, "on_store_error");
    if (rule.limit != RlsRule::Limit::limited) {
        for (const Json* v : {alg, ose}) {
            if (v != nullptr) {
                fail(join(path, v == alg ? "algorithm" : "on_store_error"),
                     "only allowed beside a rate_limit with a unit (this rule decides nothing)");
            }
        }
        return;
    }
    Policy& p = rule.policy;
    p.name = rule.label;
    p.algorithm = default_algorithm;
    if (alg != nullptr) {
        // Every algorithm but those holding leases: Envoy asks once per request and never gives
        // a lease back.
        const auto names = algorithm_names([](const AlgorithmTraits& t) { return !t.leases; });
        p.algorithm = *algorithm_named(need_one_of(*alg, join(path, "algorithm"), names));
    }
    if (ose != nullptr) {
        p.on_store_error = need_one_of(*ose, join(path, "on_store_error"), {"allow", "deny"}) == "deny"
                               ? OnStoreError::deny
                               : OnStoreError::allow;
    }
    p.limit = rule.requests_per_unit;
    p.burst = p.limit;
    p.window = std::chrono::seconds(unit_seconds(rule.unit));
    // The unit is the operator's word for how long a count lives: no long_ttl confirmation.
    p.long_ttl = true;
    rule.aligned = traits(p.algorithm).aligned;
    check_exactness(p, path);
}

void EnvoyDomainReader::check_exactness(const Policy& p, const std::string& path) const {
    const std::string rpu_path = join(join(path, "rate_limit"), "requests_per_unit");
    const AlgorithmTraits& t = traits(p.algorithm);
    if (p.limit == 0 && !t.zero_limit) {
        fail(rpu_path, std::string("0 (deny every request) needs the default algorithm ") +
                           to_string(default_algorithm) + ", this rule uses " + t.name);
    }
    if (t.member == ScriptMember::per_unit && p.limit > max_members) {
        fail(rpu_path, "expected at most " + std::to_string(max_members) + " for " + t.name +
                           " (each admitted unit is one sorted-set member), got " + std::to_string(p.limit));
    }
    // The scripts scale counts by milliseconds of the window in doubles; beyond 2^53 they round.
    if (t.ms_scaled && p.limit > max_exact_double / p.window.count()) {
        fail(rpu_path, "expected requests_per_unit * unit in ms <= 2^53 so " + std::string(to_string(p.algorithm)) +
                           " stays exact in Lua, got " + std::to_string(p.limit) + " * " +
                           std::to_string(p.window.count()));
    }
}

void EnvoyDomainReader::merge(RlsDomain& into, RlsDomain more) const {
    into.shares_threshold = into.shares_threshold || more.shares_threshold;
    into.values_in_stats = into.values_in_stats || more.values_in_stats;
    for (auto& rule : more.root.rules) {
        into.root.rules.push_back(std::move(rule));
        index_rule(into.root, into.root.rules.size() - 1, "descriptors");
    }
}

void EnvoyDomainReader::index_rule(RlsLevel& level, std::size_t index, const std::string& list_path) const {
    const RlsRule& rule = level.rules[index];
    const std::string path = join(list_path, index);
    bool fresh = true;
    std::size_t earlier = 0;
    if (rule.match == RlsRule::ValueMatch::any) {
        const auto [it, added] = level.key_only.emplace(rule.key, index);
        fresh = added;
        earlier = it->second;
    } else {
        const auto [it, added] = level.exact.emplace(RlsLevel::exact_index(rule.key, rule.value), index);
        fresh = added;
        earlier = it->second;
        if (added && rule.match == RlsRule::ValueMatch::wildcard) level.wildcards.push_back(index);
    }
    if (!fresh) {
        fail(path, "duplicate descriptor: key " + quote(rule.key) +
                       (rule.match == RlsRule::ValueMatch::any ? std::string(" without a value") : " value " + quote(rule.value)) +
                       " is already " + join(list_path, earlier));
    }
}

}  // namespace ratelimitd::policy
