// RateLimitConfig resources into the registry's Envoy domains: the same in-memory domain as the
// equivalent YAML file, the YAML reader's refusals (each naming the resource and the field),
// and the bounds of one response.
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/xds/ads_state.hpp"
#include "ratelimitd/xds/config_decoder.hpp"
#include "ratelimitd/xds/rls_conf_tree.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::xds {
namespace {

using ratelimit::config::ratelimit::v3::RateLimitDescriptor;
using DiscoveryResponse = envoy::service::discovery::v3::DiscoveryResponse;

RateLimitDescriptor* add(google::protobuf::RepeatedPtrField<RateLimitDescriptor>* list, const std::string& key,
                         const std::string& value = "") {
    auto* d = list->Add();
    d->set_key(key);
    d->set_value(value);
    return d;
}

void limit(RateLimitDescriptor* d, ratelimit::config::ratelimit::v3::RateLimitUnit unit, std::uint32_t n) {
    d->mutable_rate_limit()->set_unit(unit);
    d->mutable_rate_limit()->set_requests_per_unit(n);
}

// ERL's own example shape: nested keys, a wildcard, unlimited, shadow, replaces, detailed_metric.
RateLimitConfig edge_config() {
    RateLimitConfig c;
    c.set_name("edge-config");
    c.set_domain("edge");
    auto* remote = add(c.mutable_descriptors(), "remote_address");
    limit(remote, ratelimit::config::ratelimit::v3::SECOND, 10);
    remote->mutable_rate_limit()->set_name("per-ip");
    auto* path = add(remote->mutable_descriptors(), "path", "/api*");
    limit(path, ratelimit::config::ratelimit::v3::MINUTE, 5);
    path->set_shadow_mode(true);
    path->set_detailed_metric(true);
    auto* vip = add(c.mutable_descriptors(), "tier", "vip");
    vip->mutable_rate_limit()->set_unlimited(true);
    auto* month = add(c.mutable_descriptors(), "tier", "free");
    limit(month, ratelimit::config::ratelimit::v3::WEEK, 1000);
    month->mutable_rate_limit()->add_replaces()->set_name("per-ip");
    return c;
}

const char* edge_yaml = R"(domains:
  - domain: edge
    descriptors:
      - key: remote_address
        rate_limit: {unit: second, requests_per_unit: 10, name: per-ip}
        descriptors:
          - key: path
            value: "/api*"
            rate_limit: {unit: minute, requests_per_unit: 5}
            shadow_mode: true
            detailed_metric: true
      - key: tier
        value: vip
        rate_limit: {unlimited: true}
      - key: tier
        value: free
        rate_limit: {unit: week, requests_per_unit: 1000, replaces: [{name: per-ip}]}
)";

DiscoveryResponse response_of(const std::vector<RateLimitConfig>& configs) {
    DiscoveryResponse r;
    r.set_type_url(rate_limit_config_type_url);
    r.set_version_info("v1");
    r.set_nonce("n1");
    for (const auto& c : configs) r.add_resources()->PackFrom(c);
    return r;
}

void expect_same_level(const policy::RlsLevel& a, const policy::RlsLevel& b, const std::string& at) {
    ASSERT_EQ(a.rules.size(), b.rules.size()) << at;
    EXPECT_EQ(a.exact, b.exact) << at;
    EXPECT_EQ(a.wildcards, b.wildcards) << at;
    EXPECT_EQ(a.key_only, b.key_only) << at;
    for (std::size_t i = 0; i < a.rules.size(); ++i) {
        const auto& x = a.rules[i];
        const auto& y = b.rules[i];
        const std::string here = at + "/" + x.label;
        EXPECT_EQ(x.key, y.key) << here;
        EXPECT_EQ(x.value, y.value) << here;
        EXPECT_EQ(x.match, y.match) << here;
        EXPECT_EQ(x.limit, y.limit) << here;
        EXPECT_EQ(x.limit_name, y.limit_name) << here;
        EXPECT_EQ(x.replaces, y.replaces) << here;
        EXPECT_EQ(x.unit, y.unit) << here;
        EXPECT_EQ(x.requests_per_unit, y.requests_per_unit) << here;
        EXPECT_EQ(x.detailed_metric, y.detailed_metric) << here;
        EXPECT_EQ(x.aligned, y.aligned) << here;
        EXPECT_EQ(x.label, y.label) << here;
        EXPECT_EQ(x.key_name, y.key_name) << here;
        EXPECT_EQ(x.policy.name, y.policy.name) << here;
        EXPECT_EQ(x.policy.limit, y.policy.limit) << here;
        EXPECT_EQ(x.policy.window, y.policy.window) << here;
        EXPECT_EQ(x.policy.shadow, y.policy.shadow) << here;
        EXPECT_EQ(x.policy.algorithm, y.policy.algorithm) << here;
        expect_same_level(x.children, y.children, here);
    }
}

TEST(XdsConfig, AResourceBuildsTheDomainItsYamlBuilds) {
    auto decoded = decode_domains(response_of({edge_config()}));
    ASSERT_TRUE(decoded) << decoded.error().detail;
    const auto yaml = policy::parse_config(edge_yaml, "edge.yaml");
    ASSERT_TRUE(yaml.registry.domains);
    const auto* from_xds = (*decoded)->find("edge");
    const auto* from_yaml = yaml.registry.domains->find("edge");
    ASSERT_NE(from_xds, nullptr);
    ASSERT_NE(from_yaml, nullptr);
    expect_same_level(from_xds->root, from_yaml->root, "edge");
    EXPECT_EQ(from_xds->root.rules.size(), 3u);
}

TEST(XdsConfig, TheTreeIsWhatAYamlFileWouldSay) {
    std::size_t seen = 0;
    const auto tree = to_config_tree(edge_config(), seen);
    EXPECT_EQ(seen, 4u);
    EXPECT_EQ(tree["domain"], "edge");
    EXPECT_EQ(tree["descriptors"][0]["rate_limit"]["unit"], "second");
    EXPECT_FALSE(tree["descriptors"][0].contains("value")) << "an empty value is no value";
    EXPECT_FALSE(tree["descriptors"][1]["rate_limit"].contains("unit")) << "UNKNOWN beside unlimited: no unit";
    EXPECT_EQ(tree["descriptors"][2]["rate_limit"]["replaces"][0]["name"], "per-ip");
}

TEST(XdsConfig, EveryDomainOfTheResponseIsServedAndNoneIsAValidState) {
    auto other = edge_config();
    other.set_name("other");
    other.set_domain("other");
    auto both = decode_domains(response_of({edge_config(), other}));
    ASSERT_TRUE(both) << both.error().detail;
    EXPECT_EQ((*both)->by_name.size(), 2u);
    auto none = decode_domains(response_of({}));
    ASSERT_TRUE(none) << none.error().detail;
    EXPECT_TRUE((*none)->by_name.empty());
}

// Each refusal: the message a NACK carries names the resource and the field.
void expect_refused(const DiscoveryResponse& r, const std::string& words) {
    const auto decoded = decode_domains(r);
    ASSERT_FALSE(decoded) << words;
    EXPECT_NE(decoded.error().detail.find(words), std::string::npos) << decoded.error().detail;
}

TEST(XdsConfig, ARuleTheYamlReaderRefusesIsRefusedNamingTheResourceAndTheField) {
    auto no_unit = edge_config();
    no_unit.mutable_descriptors(0)->mutable_rate_limit()->set_unit(ratelimit::config::ratelimit::v3::UNKNOWN);
    expect_refused(response_of({no_unit}), "resources[0] (name \"edge-config\"): descriptors[0].rate_limit.unit: missing");

    auto unlimited_with_unit = edge_config();
    unlimited_with_unit.mutable_descriptors(1)->mutable_rate_limit()->set_unit(ratelimit::config::ratelimit::v3::HOUR);
    expect_refused(response_of({unlimited_with_unit}), "descriptors[1].rate_limit.unit: not allowed with unlimited");

    auto empty_key = edge_config();
    empty_key.mutable_descriptors(0)->set_key("");
    expect_refused(response_of({empty_key}), "descriptors[0].key: expected a descriptor key");

    auto duplicate = edge_config();
    *duplicate.add_descriptors() = duplicate.descriptors(1);
    expect_refused(response_of({duplicate}), "descriptors[3]: duplicate descriptor");

    auto self_replace = edge_config();
    self_replace.mutable_descriptors(0)->mutable_rate_limit()->add_replaces()->set_name("per-ip");
    expect_refused(response_of({self_replace}), "a limit cannot replace itself");

    auto no_domain = edge_config();
    no_domain.set_domain("");
    expect_refused(response_of({edge_config(), no_domain}), "resources[1] (name \"edge-config\"): domain: expected 1..");
}

// quota_mode over xDS, as in a file: accepted, and the rule is in quota mode.
TEST(XdsConfig, QuotaModeIsServedAsAFileServesIt) {
    auto quota = edge_config();
    quota.mutable_descriptors(0)->set_quota_mode(true);
    auto decoded = decode_domains(response_of({quota}));
    ASSERT_TRUE(decoded) << decoded.error().detail;
    EXPECT_TRUE((*decoded)->find("edge")->root.rules[0].quota_mode);
    EXPECT_FALSE((*decoded)->find("edge")->root.rules[1].quota_mode);
}

TEST(XdsConfig, TwoResourcesOfOneDomainAreRefused) {
    auto second = edge_config();
    second.set_name("again");
    expect_refused(response_of({edge_config(), second}), "resources[1] (name \"again\"): domain: duplicate domain \"edge\"");
}

TEST(XdsConfig, AResourceOfAnotherTypeOrOfGarbageBytesIsRefused) {
    auto wrong_type = response_of({edge_config()});
    wrong_type.mutable_resources(0)->set_type_url("type.googleapis.com/envoy.config.cluster.v3.Cluster");
    expect_refused(wrong_type, "resources[0]: expected a type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig");
    auto garbage = response_of({edge_config()});
    garbage.mutable_resources(0)->set_value(std::string("\xff\xff\xff\xff\x0f garbage", 13));
    expect_refused(garbage, "resources[0]: not a valid RateLimitConfig message");
}

TEST(XdsConfig, TheBoundsOfOneResponseHold) {
    // Nesting past the reader's depth: refused at the depth, however deep the message goes.
    RateLimitConfig deep;
    deep.set_domain("deep");
    auto* level = deep.mutable_descriptors();
    for (int i = 0; i < 90; ++i) level = add(level, "k" + std::to_string(i))->mutable_descriptors();
    expect_refused(response_of({deep}), "descriptors nest deeper than 16 levels");

    DiscoveryResponse many;
    many.set_type_url(rate_limit_config_type_url);
    for (std::size_t i = 0; i <= xds_bounds::max_resources; ++i) {
        RateLimitConfig c;
        c.set_domain("d" + std::to_string(i));
        many.add_resources()->PackFrom(c);
    }
    expect_refused(many, "resources: 1001 resources, at most 1000 allowed");

    RateLimitConfig wide;
    wide.set_domain("wide");
    for (std::size_t i = 0; i <= xds_bounds::max_descriptors; ++i) add(wide.mutable_descriptors(), "k", std::to_string(i));
    expect_refused(response_of({wide}), "more than 100000 descriptors in one response");
}

}  // namespace
}  // namespace ratelimitd::xds
