// to_config_tree: a RateLimitConfig written as envoyproxy/ratelimit's own converter writes it
// (its config_xds.go maps each field onto the YAML document's), ready for the YAML reader.
#include "ratelimitd/xds/rls_conf_tree.hpp"

#include "ratelimitd/policy/envoy_domain_reader.hpp"

#include <algorithm>
#include <cctype>

namespace ratelimitd::xds {
namespace {

using policy::ConfigTree;
using ratelimit::config::ratelimit::v3::RateLimitDescriptor;
using ratelimit::config::ratelimit::v3::RateLimitPolicy;
using ratelimit::config::ratelimit::v3::RateLimitUnit;

// The unit as the YAML writes it; UNKNOWN is left out (the reader then says what is missing).
std::string unit_word(RateLimitUnit unit) {
    std::string word = ratelimit::config::ratelimit::v3::RateLimitUnit_Name(unit);
    std::transform(word.begin(), word.end(), word.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return word;
}

ConfigTree rate_limit_tree(const RateLimitPolicy& p) {
    ConfigTree out = ConfigTree::object();
    if (p.unit() != ratelimit::config::ratelimit::v3::UNKNOWN) {
        // An enum number no name has (a newer unit): written as its number, which the reader refuses.
        const std::string word = unit_word(p.unit());
        out["unit"] = word.empty() ? ConfigTree(static_cast<int>(p.unit())) : ConfigTree(word);
    }
    out["requests_per_unit"] = p.requests_per_unit();
    if (p.unlimited()) out["unlimited"] = true;
    if (!p.name().empty()) out["name"] = p.name();
    if (p.replaces_size() > 0) {
        ConfigTree list = ConfigTree::array();
        for (const auto& r : p.replaces()) list.push_back(ConfigTree{{"name", r.name()}});
        out["replaces"] = std::move(list);
    }
    return out;
}

ConfigTree descriptors_tree(const google::protobuf::RepeatedPtrField<RateLimitDescriptor>& list, std::size_t depth,
                            std::size_t& seen) {
    ConfigTree out = ConfigTree::array();
    for (const auto& d : list) {
        ++seen;
        ConfigTree item = ConfigTree::object();
        item["key"] = d.key();
        if (!d.value().empty()) item["value"] = d.value();
        if (d.has_rate_limit()) item["rate_limit"] = rate_limit_tree(d.rate_limit());
        if (d.shadow_mode()) item["shadow_mode"] = true;
        if (d.detailed_metric()) item["detailed_metric"] = true;
        if (d.quota_mode()) item["quota_mode"] = true;
        if (d.has_metadata()) item["metadata"] = ConfigTree::object();
        // One level past the bound is enough for the reader to refuse it, naming the path.
        if (d.descriptors_size() > 0 && depth <= policy::envoy_bounds::max_depth) {
            item["descriptors"] = descriptors_tree(d.descriptors(), depth + 1, seen);
        } else if (d.descriptors_size() > 0) {
            item["descriptors"] = ConfigTree::array();
        }
        out.push_back(std::move(item));
    }
    return out;
}

}  // namespace

policy::ConfigTree to_config_tree(const RateLimitConfig& config, std::size_t& descriptors_seen) {
    ConfigTree out = ConfigTree::object();
    out["domain"] = config.domain();
    if (config.descriptors_size() > 0) out["descriptors"] = descriptors_tree(config.descriptors(), 1, descriptors_seen);
    return out;
}

}  // namespace ratelimitd::xds
