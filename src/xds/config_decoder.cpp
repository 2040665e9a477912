// decode_domains: unpack, bound, convert (rls_conf_tree), read with the YAML reader.
#include "ratelimitd/xds/config_decoder.hpp"

#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/envoy_domain_reader.hpp"
#include "ratelimitd/xds/ads_state.hpp"
#include "ratelimitd/xds/rls_conf_tree.hpp"

#include <string>

namespace ratelimitd::xds {
namespace {

Problem refused(std::string why) { return Problem{errc::invalid_request, std::move(why)}; }

// What messages call the resource: the reader puts it where a file's name goes.
std::string resource_label(std::size_t index, const RateLimitConfig& config) {
    return "resources[" + std::to_string(index) + "] (name " + quote(config.name(), 128) + ")";
}

}  // namespace

result<std::shared_ptr<const policy::RlsDomains>> decode_domains(
    const envoy::service::discovery::v3::DiscoveryResponse& response) {
    if (static_cast<std::size_t>(response.resources_size()) > xds_bounds::max_resources) {
        return refused("resources: " + std::to_string(response.resources_size()) + " resources, at most " +
                       std::to_string(xds_bounds::max_resources) + " allowed");
    }
    try {
        auto domains = std::make_shared<policy::RlsDomains>();
        std::size_t descriptors = 0;
        for (int i = 0; i < response.resources_size(); ++i) {
            const auto& any = response.resources(i);
            const std::string at = "resources[" + std::to_string(i) + "]";
            if (any.type_url() != rate_limit_config_type_url) {
                return refused(at + ": expected a " + rate_limit_config_type_url + ", got " + quote(any.type_url(), 256));
            }
            RateLimitConfig config;
            if (!any.UnpackTo(&config)) return refused(at + ": not a valid RateLimitConfig message");
            const std::string label = resource_label(static_cast<std::size_t>(i), config);
            const auto tree = to_config_tree(config, descriptors);
            if (descriptors > xds_bounds::max_descriptors) {
                return refused("resources: more than " + std::to_string(xds_bounds::max_descriptors) +
                               " descriptors in one response");
            }
            policy::RlsDomain domain = policy::EnvoyDomainReader(label).read(tree, "");
            if (const auto* earlier = domains->find(domain.name)) {
                return refused(label + ": domain: duplicate domain " + quote(domain.name) + " (already in " +
                               earlier->source_file + ")");
            }
            std::string name = domain.name;
            domains->by_name.emplace(std::move(name), std::move(domain));
        }
        return std::shared_ptr<const policy::RlsDomains>(std::move(domains));
    } catch (const policy::ConfigError& e) {
        return refused(e.what());
    } catch (const std::exception& e) {
        // Out of memory on a huge config: refused like any bad one, the old config stays.
        return refused(std::string("cannot be read: ") + e.what());
    }
}

}  // namespace ratelimitd::xds
