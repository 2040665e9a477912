// The Envoy rate limit service planner: a ShouldRateLimit call's descriptors matched to their
// rules, `replaces` applied, costs checked, keys built; the result is one CheckPlan decided
// as a whole (all-or-nothing) and what each descriptor's status reports.
#include "ratelimitd/policy/rls_plan.hpp"

#include "ratelimitd/check/check_request.hpp"
#include "ratelimitd/core/hex.hpp"
#include "ratelimitd/policy/erl_counter.hpp"
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/policy/rls_domain.hpp"
#include "ratelimitd/policy/rls_match.hpp"
#include "ratelimitd/policy/rls_override.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <span>

namespace ratelimitd::policy {
namespace {

/// Values longer than this once escaped are hashed: a key stays short whatever Envoy sends.
constexpr std::size_t max_raw_values_bytes = 192;

std::string descriptor_path(std::size_t i) { return "descriptors[" + std::to_string(i) + "]"; }

Problem bad_request(std::string detail) { return Problem{errc::invalid_request, std::move(detail)}; }

/// Only what the proxy itself shapes can make a call invalid: an entry's key comes from its
/// config (an action's descriptor_key), never from its client. A value (any length: the
/// decoder bounded it, rls_value.hpp), the number of entries (more than any rule nests match
/// none, as envoyproxy/ratelimit matches them) and a hits_addend are decided, never refused.
result<void> validate_descriptor(const RlsDescriptor& d, std::size_t i) {
    if (d.entries.empty()) return bad_request(descriptor_path(i) + ".entries: expected at least one entry");
    for (std::size_t j = 0; j < d.entries.size(); ++j) {
        const auto& e = d.entries[j];
        const std::string path = descriptor_path(i) + ".entries[" + std::to_string(j) + "]";
        if (e.key.empty()) return bad_request(path + ".key: expected a key, got an empty one");
        if (e.key.size() > rls_bounds::max_key_bytes) {
            return bad_request(path + ".key: " + std::to_string(e.key.size()) + " bytes, at most " +
                               std::to_string(rls_bounds::max_key_bytes) + " allowed");
        }
    }
    if (d.limit) return validate_override(*d.limit, i);
    return {};
}

/// The domain the call names (nullptr: none configured by that name); the shape of the call
/// checked before any rule is looked at.
result<const RlsDomain*> validate_request(const Registry& reg, const RlsRequest& req) {
    if (req.domain.empty()) return bad_request("domain: expected a domain, got an empty one");
    const RlsDomain* domain = reg.domains ? reg.domains->find(req.domain) : nullptr;
    if (req.descriptors.empty()) return bad_request("descriptors: expected at least one descriptor");
    if (req.descriptors.size() > rls_bounds::max_descriptors) {
        return bad_request("descriptors: " + std::to_string(req.descriptors.size()) + " descriptors, at most " +
                           std::to_string(rls_bounds::max_descriptors) + " allowed");
    }
    for (std::size_t i = 0; i < req.descriptors.size(); ++i) {
        if (auto ok = validate_descriptor(req.descriptors[i], i); !ok) return ok.error();
    }
    return domain;
}

/// A hits_addend as a cost, saturated at max_cost + 1: a larger one is more than any limit
/// admits, and what it is beyond that does not matter (64 of them still fit the sum).
std::uint32_t cost_of(std::uint64_t hits) {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(hits, check::max_cost + 1));
}

/// A hits_addend as envoyproxy/ratelimit charges it: whole, within what a check carries.
std::uint32_t erl_cost_of(std::uint64_t hits) {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(hits, std::numeric_limits<std::uint32_t>::max()));
}

/// a + b, at most UINT32_MAX.
std::uint32_t saturating_add(std::uint32_t a, std::uint32_t b) {
    return static_cast<std::uint32_t>(
        std::min<std::uint64_t>(std::uint64_t{a} + b, std::numeric_limits<std::uint32_t>::max()));
}

/// The descriptor's values as the counter key writes them: each escaped, joined by '.'
/// (escaped values hold none), or "%h" and the SHA-256 of the raw values (length-prefixed,
/// so no two lists hash alike) when that is long. "%h" is never the start of an escaped value.
std::string key_values(std::span<const RlsEntry> entries) {
    std::string out;
    for (const auto& e : entries) {
        if (!out.empty()) out.push_back('.');
        out += escape_key_part(e.value);
    }
    if (out.size() <= max_raw_values_bytes) return out;
    std::string raw;
    for (const auto& e : entries) raw.append(std::to_string(e.value.size())).append(":").append(e.value);
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(raw.data()), raw.size(), digest);
    return "%h" + to_hex(std::span<const unsigned char>(digest));
}

/// The names every matched limit replaces (`rate_limit.replaces`), as envoyproxy/ratelimit
/// collects them over the whole call before it drops the limits so named.
std::set<std::string, std::less<>> replaced_names(const std::vector<const RlsRule*>& rules) {
    std::set<std::string, std::less<>> names;
    for (const RlsRule* r : rules) {
        if (r != nullptr && r->limit != RlsRule::Limit::none) names.insert(r->replaces.begin(), r->replaces.end());
    }
    return names;
}

/// What one descriptor reports, before its limit is added.
RlsDescriptorPlan describe_rule(const RlsDomain& domain, const RlsRule* rule,
                                const std::set<std::string, std::less<>>& replaced) {
    RlsDescriptorPlan out;
    out.label = rule != nullptr ? rule->label : escape_label_part(domain.name);
    if (rule == nullptr || rule->limit == RlsRule::Limit::none) return out;
    if (!rule->limit_name.empty() && replaced.count(rule->limit_name) != 0) return out;  // replaced: no limit
    if (rule->limit == RlsRule::Limit::unlimited) {
        out.kind = RlsDescriptorPlan::Kind::unlimited;
        return out;
    }
    out.kind = RlsDescriptorPlan::Kind::limited;
    out.rule = rule;
    out.name = rule->limit_name;
    out.requests_per_unit = rule->requests_per_unit;
    out.unit = rule->unit;
    return out;
}

/// What an overridden descriptor counts under, as envoyproxy/ratelimit keys it: every entry's
/// key and value (escaped, so "k.v" pairs stay apart), the rule it matches playing no part.
std::string override_values(std::span<const RlsEntry> entries) {
    std::vector<RlsEntry> parts;
    for (const auto& e : entries) {
        parts.push_back(RlsEntry{"", e.key});
        parts.push_back(RlsEntry{"", e.value});
    }
    return key_values(parts);
}

/// The counter a limited descriptor spends: its limit, the rule part of its key, its values.
struct Counter {
    const Policy* policy;
    std::string_view key_name;
    std::string values;
    RlsUnit unit;
    bool aligned;
};

/// The rule's limit for this descriptor into the plan: a new PlannedLimit, or the cost added to
/// the one another descriptor of the call already has with the same key. A cost of 0 (a
/// descriptor's own hits_addend 0) asks without charging; beside a charged descriptor of the
/// same key it adds nothing, and the limit is charged (and decided) as the other asks.
void add_limit(RlsPlan& out, RlsDescriptorPlan& dp, Counter counter, std::uint32_t cost, std::int64_t now_s) {
    std::int64_t window_start = -1;
    if (counter.aligned) {
        const std::int64_t unit = unit_seconds(counter.unit);
        window_start = now_s / unit * unit;
        dp.window_end_s = window_start + unit;
    }
    std::string key = make_descriptor_key(out.check.registry->prefix, counter.key_name, counter.values, window_start);
    for (std::size_t i = 0; i < out.check.limits.size(); ++i) {
        if (out.check.limits[i].windows.front().key == key) {
            PlannedLimit& same = out.check.limits[i];
            same.cost += cost;  // at most max_descriptors * max_cost: no overflow
            same.check_only = same.check_only && cost == 0;
            dp.limit = i;
            return;
        }
    }
    PlannedLimit limit{counter.policy, std::move(counter.values), {}, cost, cost == 0};
    if (counter.aligned) limit.window_end_s = static_cast<std::uint32_t>(dp.window_end_s);
    limit.windows.push_back(KeyedWindow{counter.policy, std::move(key)});
    dp.limit = out.check.limits.size();
    out.check.limits.push_back(std::move(limit));
}

/// envoy_key_layout: envoyproxy-ratelimit: the descriptor's counter on envoyproxy/ratelimit's
/// key (domain, every entry, the window's start), counted as its pods count. Descriptors of one
/// call that name one key become one limit charged their summed cost (its pods send one INCRBY
/// each, which ends at the same count).
void add_erl_limit(RlsPlan& out, RlsDescriptorPlan& dp, const Counter& counter, std::string_view domain,
                   std::span<const RlsEntry> entries, std::uint32_t cost, std::int64_t now_s, const EnvoyKeys& keys) {
    dp.window_end_s = erl_window_start(dp.unit, now_s) + unit_seconds(dp.unit);
    std::string key = erl_key(keys.prefix, domain, entries, dp.unit, now_s);
    for (std::size_t i = 0; i < out.check.limits.size(); ++i) {
        if (out.check.limits[i].windows.front().key == key) {
            PlannedLimit& same = out.check.limits[i];
            same.cost = saturating_add(same.cost, cost);
            same.check_only = same.check_only && cost == 0;
            dp.limit = i;
            return;
        }
    }
    out.override_policies.push_back(
        std::make_unique<const Policy>(erl_policy(*counter.policy, dp.requests_per_unit, dp.unit, keys.jitter)));
    const Policy* policy = out.override_policies.back().get();
    PlannedLimit limit{policy, counter.values, {}, cost, cost == 0};
    limit.window_end_s = static_cast<std::uint32_t>(dp.window_end_s);
    limit.windows.push_back(KeyedWindow{policy, std::move(key)});
    dp.limit = out.check.limits.size();
    out.check.limits.push_back(std::move(limit));
}

/// How each limit takes part in the store call: envoyproxy/ratelimit's counters as its pods
/// charge them (envoy_denied_calls: charge: every one whatever the others answer, its
/// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT=false; refuse: all when none goes past its limit,
/// else only those that do); ratelimitd's own limits all-or-nothing, check_only ones asked.
void assign_parts(RlsPlan& out, bool erl_layout) {
    const bool charge_denied = out.check.registry->domains && out.check.registry->domains->charge_denied;
    for (auto& l : out.check.limits) {
        if (erl_layout && l.policy->algorithm == Algorithm::erl_fixed_window) {
            l.part = charge_denied ? Part::charge : Part::decide;
        } else {
            l.part = l.check_only ? Part::ask : Part::decide;
        }
    }
    out.check.single_call = erl_layout;
}

/// A descriptor that sends its own limit: decided by it, whatever rule it matches.
Counter describe_override(RlsPlan& out, RlsDescriptorPlan& dp, std::string_view domain, const RlsDescriptor& d,
                          std::string& key_name) {
    out.override_policies.push_back(std::make_unique<const Policy>(override_policy(*d.limit, override_label(domain))));
    const Policy* policy = out.override_policies.back().get();
    dp.kind = RlsDescriptorPlan::Kind::limited;
    dp.label = policy->name;
    dp.requests_per_unit = d.limit->requests_per_unit;
    dp.unit = static_cast<RlsUnit>(d.limit->unit);
    key_name = override_key_name(domain);
    return Counter{policy, key_name, override_values(d.entries), dp.unit, true};
}

/// Quota mode on each limit a quota descriptor decides: its rule's `quota_mode`, or every
/// limit under envoy_quota_mode; a descriptor that sends its own limit is quota only under the
/// latter, as envoyproxy/ratelimit copies no rule's flags onto such a limit.
void mark_quota(RlsPlan& out, const std::vector<const RlsRule*>& rules, bool quota_all) {
    for (std::size_t i = 0; i < out.descriptors.size(); ++i) {
        const RlsDescriptorPlan& dp = out.descriptors[i];
        if (dp.kind != RlsDescriptorPlan::Kind::limited) continue;
        if (quota_all || (rules[i] != nullptr && rules[i]->quota_mode)) out.check.limits[dp.limit].quota = true;
    }
}

/// The entries a descriptor's counter is keyed by: share_threshold_entries when the domain
/// has share_threshold rules (`shared` filled), else the descriptor's own.
std::span<const RlsEntry> counted(const std::vector<RlsEntry>& shared, const RlsDescriptor& d) {
    if (shared.empty()) return d.entries;
    return shared;
}

/// The most one call may spend on `l`: what its policy can ever admit, within 1..max_cost.
std::int64_t most_admitted(const PlannedLimit& l) {
    return std::min<std::int64_t>(l.policy->max_cost(), check::max_cost);
}

/// Limits whose cost (summed over their descriptors) is more than they can ever admit: an
/// enforced one makes the call a denial that asks the store nothing (envoyproxy/ratelimit
/// answers OVER_LIMIT too; an error would let Envoy pass the request uncounted); a shadow one,
/// which never denies, is charged the most it can admit. A rule of requests_per_unit 0 admits
/// nothing anyway: any cost is simply over it, as the store says.
void mark_never_admitted(RlsPlan& out) {
    for (auto& dp : out.descriptors) {
        if (dp.kind != RlsDescriptorPlan::Kind::limited) continue;
        PlannedLimit& l = out.check.limits[dp.limit];
        // envoyproxy/ratelimit's counters take any cost: past the limit, it is charged and over.
        if (l.policy->algorithm == Algorithm::erl_fixed_window) continue;
        if (l.policy->limit == 0 || static_cast<std::int64_t>(l.cost) <= most_admitted(l)) continue;
        if (l.shadow()) {
            l.cost = static_cast<std::uint32_t>(most_admitted(l));
            continue;
        }
        dp.never_admitted = true;
        out.never_admitted = true;
    }
}

/// A domain no config names: every descriptor matches nothing and the call answers OK, as
/// envoyproxy/ratelimit answers it (a proxy configured ahead of its limits keeps serving).
/// The label is fixed: the caller's domain never becomes a metric label.
RlsPlan unknown_domain_plan(std::shared_ptr<const Registry> registry, const RlsRequest& req) {
    RlsPlan out;
    out.check = CheckPlan{std::move(registry), {}, {}, escape_key_part(req.domain), 1};
    RlsDescriptorPlan none;
    none.label = unknown_domain_label;
    out.descriptors.assign(req.descriptors.size(), none);
    return out;
}

}  // namespace

result<RlsPlan> plan(std::shared_ptr<const Registry> registry, const RlsRequest& req, const EnvoyKeys& keys,
                     std::chrono::system_clock::time_point now) {
    // envoyproxy/ratelimit's answer before its first config (its service error, same words).
    if (registry->awaiting_xds) return Problem{errc::config_pending, "no rate limit configuration loaded"};
    auto domain = validate_request(*registry, req);
    if (!domain) return domain.error();
    if (*domain == nullptr) return unknown_domain_plan(std::move(registry), req);
    const auto cost_fn = keys.erl ? &erl_cost_of : &cost_of;
    const std::uint32_t request_cost = cost_fn(req.hits_addend == 0 ? 1 : req.hits_addend);

    std::vector<const RlsRule*> rules;
    for (const auto& d : req.descriptors) {
        // A descriptor with its own limit matches no rule: it neither replaces nor is replaced.
        rules.push_back(d.limit ? nullptr : match_descriptor(**domain, d.entries));
    }
    const auto replaced = replaced_names(rules);

    RlsPlan out;
    // The call's own cost stays within 1..max_cost: each limit carries what it is charged.
    out.check = CheckPlan{std::move(registry), {}, {}, escape_key_part(req.domain),
                          std::min<std::uint32_t>(request_cost, check::max_cost)};
    const std::int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    for (std::size_t i = 0; i < req.descriptors.size(); ++i) {
        const RlsDescriptor& d = req.descriptors[i];
        // A descriptor's own hits_addend, 0 included (check without charging), else the request's.
        const std::uint32_t cost = d.hits_addend ? cost_fn(*d.hits_addend) : request_cost;
        RlsDescriptorPlan dp;
        std::string key_name;
        std::vector<RlsEntry> shared;  // the entries with share_threshold patterns, when the domain has any
        std::optional<Counter> counter;
        if (d.limit) {
            counter = describe_override(out, dp, req.domain, d, key_name);
        } else {
            dp = describe_rule(**domain, rules[i], replaced);
            if (dp.kind == RlsDescriptorPlan::Kind::limited) {
                const RlsRule& rule = *rules[i];
                if ((*domain)->shares_threshold) shared = share_threshold_entries(**domain, d.entries);
                counter = Counter{&rule.policy, rule.key_name, key_values(counted(shared, d)), rule.unit, rule.aligned};
                if (rule.detailed_metric) dp.detailed_label = dp.label + "_" + escape_label_part(d.entries.back().value);
            }
        }
        if (counter && keys.erl && counter->aligned) {
            add_erl_limit(out, dp, *counter, req.domain, counted(shared, d), cost, now_s, keys);
        } else if (counter) {
            add_limit(out, dp, std::move(*counter), cost, now_s);
        }
        out.descriptors.push_back(std::move(dp));
    }
    mark_quota(out, rules, keys.quota_all);
    mark_never_admitted(out);
    assign_parts(out, keys.erl);
    out.check.store_failure = keys.store_error;
    out.shadow_all = keys.shadow_all;
    return out;
}

result<RlsPlan> plan(std::shared_ptr<const Registry> registry, const RlsRequest& req,
                     std::chrono::system_clock::time_point now) {
    return plan(std::move(registry), req, EnvoyKeys{}, now);
}

result<RlsPlan> plan(std::shared_ptr<const Registry> registry, const RlsRequest& req, const EnvoyKeys& keys) {
    return plan(std::move(registry), req, keys, std::chrono::system_clock::now());
}

result<RlsPlan> plan(std::shared_ptr<const Registry> registry, const RlsRequest& req) {
    return plan(std::move(registry), req, std::chrono::system_clock::now());
}

}  // namespace ratelimitd::policy
