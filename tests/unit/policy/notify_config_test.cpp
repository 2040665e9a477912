// `notify:` in the registry: targets and thresholds read and hung on every version of a
// policy, and what is refused, each message naming the field and never the secret.
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/notify_rule.hpp"
#include "ratelimitd/policy/registry_loader.hpp"

#include "unit/policy/config_refusals.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using ratelimitd::test::parse_error_of;

using namespace ratelimitd::policy;

const std::string webhook_secret = "0123456789abcdef-secret";

std::string with_notify(const std::string& notify) {
    return R"(
policies:
  api: {algorithm: fixed_window, limit: 100, window: 1m}
  conc: {algorithm: concurrency, limit: 5, lease: 30s}
  multi:
    algorithm: sliding_window
    windows:
      - {limit: 10, window: 1s}
      - {limit: 100, window: 1m}
plans:
  pro:
    api: {limit: 1000, window: 1m}
tenants:
  big: {overrides: {api: {limit: 5000, window: 1m}}}
)" + notify;
}

std::string target(const std::string& url, const std::string& key = webhook_secret, const std::string& more = "") {
    return "notify:\n  targets:\n    ops: {url: \"" + url + "\", secret: \"" + key + "\"" + more +
           "}\n  policies:\n    api: {at: [0.8, 1.0], target: ops}\n";
}

TEST(NotifyConfig, TargetsAndThresholdsReachEveryVersionOfThePolicy) {
    const Config c = parse_config(with_notify(R"(notify:
  targets:
    ops: {url: "http://hooks.internal:8080/rl?x=1", secret: ")" + webhook_secret + R"(", timeout: 500ms}
    other: {url: "http://10.0.0.7/", secret: ")" + webhook_secret + R"("}
  policies:
    api: {at: [0.8, 1.0], target: ops}
    multi: {at: [0.5], target: other}
)"),
                                  "notify.yaml");
    const Registry& r = c.registry;
    ASSERT_TRUE(r.notify);
    const auto& ops = *r.notify->targets.at("ops");
    EXPECT_EQ(ops.host, "hooks.internal");
    EXPECT_EQ(ops.port, "8080");
    EXPECT_EQ(ops.target, "/rl?x=1");
    EXPECT_EQ(ops.timeout.count(), 500);
    EXPECT_EQ(ops.secret, webhook_secret);
    EXPECT_EQ(r.notify->targets.at("other")->port, "80");
    EXPECT_EQ(r.notify->targets.at("other")->timeout.count(), 2000) << "the default timeout";

    const auto& rule = r.find("api")->notify;
    ASSERT_TRUE(rule);
    EXPECT_EQ(rule->policy, "api");
    EXPECT_EQ(rule->at, (std::vector<double>{0.8, 1.0}));
    EXPECT_EQ(rule->target->name, "ops");
    EXPECT_EQ(r.plans.at("pro").policies.at("api").notify, rule) << "a plan's version";
    EXPECT_EQ(r.tenants.at("big").overrides.at("api").notify, rule) << "a tenant's override";
    const Policy& multi = *r.find("multi");
    ASSERT_EQ(multi.windows.size(), 2u);
    EXPECT_EQ(multi.windows[1].notify, multi.notify) << "each window of a multi-window policy";
    EXPECT_EQ(multi.notify->policy, "multi");
    EXPECT_FALSE(r.find("conc")->notify);
}

// Leases held are usage too: a concurrency policy's thresholds are N of its `limit` leases.
TEST(NotifyConfig, AConcurrencyPolicyTakesThresholdsInLeasesHeld) {
    const Config c = parse_config(with_notify("notify:\n  targets:\n    ops: {url: \"http://x/\", secret: \"" +
                                              webhook_secret + "\"}\n  policies:\n    conc: {at: [0.8, 1.0], target: ops}\n"),
                                  "notify.yaml");
    const auto& rule = c.registry.find("conc")->notify;
    ASSERT_TRUE(rule);
    EXPECT_EQ(rule->at, (std::vector<double>{0.8, 1.0}));
    EXPECT_EQ(threshold_spec(*rule, 5), "4,0") << "the 4th of 5 leases, and the first acquire refused";
}

// Rules an xDS control plane sends arrive after the load: a name that is no policy is kept as
// the label of one, hung on each version's rules as it is applied; a debt bound cannot be
// checked against a max_debt not known yet.
TEST(NotifyConfig, AnXdsLabelIsKeptForTheRulesTheControlPlaneSends) {
    const std::string head = "xds_server: 127.0.0.1:18000\nnotify:\n  targets:\n    ops: {url: \"http://x/\", secret: \"" +
                             webhook_secret + "\"}\n  policies:\n";
    const Config c = parse_config(head + "    llm.tokens: {at: [0.8], target: ops}\n", "notify.yaml");
    ASSERT_TRUE(c.registry.notify);
    ASSERT_EQ(c.registry.notify->xds_labels.count("llm.tokens"), 1u);
    EXPECT_EQ(c.registry.notify->xds_labels.at("llm.tokens")->at, (std::vector<double>{0.8}));
    const std::string refusal = parse_error_of(head + "    llm.tokens: {at: [0.8], debt: 10, target: ops}\n", "notify.yaml");
    EXPECT_NE(refusal.find("notify.policies.llm.tokens.debt: no debt bound on a rule the xDS control plane sends"),
              std::string::npos)
        << refusal;
}

TEST(NotifyConfig, AFileWithoutNotifyHasNone) {
    const Config c = parse_config(with_notify(""), "notify.yaml");
    EXPECT_FALSE(c.registry.notify);
    EXPECT_FALSE(c.registry.find("api")->notify);
}

TEST(NotifyConfig, ThresholdUnitsAreTheCeilingOfTheFractionAndOneMeansTheFirstDenial) {
    EXPECT_EQ(threshold_units(0.8, 100), 80);
    EXPECT_EQ(threshold_units(0.8, 7), 6);    // 5.6 up
    EXPECT_EQ(threshold_units(0.01, 10), 1);  // never 0: that is the denial
    EXPECT_EQ(threshold_units(1.0, 10), 0);
    NotifyRule rule{"api", {0.5, 0.9, 1.0}, nullptr};
    EXPECT_EQ(threshold_spec(rule, 10), "5,9,0");
}

TEST(NotifyConfig, HttpsTargetsVerifyWithTheSystemCasOrTheirOwnCaFile) {
    const Config c = parse_config(with_notify(target("https://hooks.example/x")), "notify.yaml");
    const auto& t = *c.registry.notify->targets.at("ops");
    EXPECT_TRUE(t.tls);
    EXPECT_EQ(t.port, "443");
    EXPECT_EQ(t.host, "hooks.example");
    EXPECT_EQ(t.ca_file, "") << "the system's CAs";
    const Config own = parse_config(
        with_notify(target("https://hooks.example:8443/x", webhook_secret, ", ca_file: /etc/hostname")), "notify.yaml");
    EXPECT_EQ(own.registry.notify->targets.at("ops")->ca_file, "/etc/hostname");
    EXPECT_EQ(own.registry.notify->targets.at("ops")->port, "8443");
    const auto missing = parse_error_of(
        with_notify(target("https://hooks.example/x", webhook_secret, ", ca_file: /nonexistent/ca.pem")), "notify.yaml");
    EXPECT_NE(missing.find("notify.targets.ops.ca_file: cannot read \"/nonexistent/ca.pem\""), std::string::npos)
        << missing;
    const auto plain = parse_error_of(
        with_notify(target("http://hooks.example/x", webhook_secret, ", ca_file: /etc/hostname")), "notify.yaml");
    EXPECT_NE(plain.find("notify.targets.ops.ca_file: only allowed with an https:// URL"), std::string::npos) << plain;
}

TEST(NotifyConfig, BadUrlsAreRefusedNamingTheField) {
    for (const std::string url : {"ftp://x/", "hooks.internal/x", "http:///x", "http://x:99999/", "http://x:0/",
                                  "http://x:port/"}) {
        const auto e = parse_error_of(with_notify(target(url)), "notify.yaml");
        EXPECT_NE(e.find("notify.targets.ops.url: expected"), std::string::npos) << url << ": " << e;
    }
    const auto userinfo = parse_error_of(with_notify(target("http://user:pw-in-url@x/")), "notify.yaml");
    EXPECT_NE(userinfo.find("no user or password"), std::string::npos) << userinfo;
    EXPECT_EQ(userinfo.find("pw-in-url"), std::string::npos) << "a credential in a URL is not echoed: " << userinfo;
}

TEST(NotifyConfig, AShortSecretIsRefusedWithoutEchoingIt) {
    const auto e = parse_error_of(with_notify(target("http://x/", "short-secret")), "notify.yaml");
    EXPECT_NE(e.find("notify.targets.ops.secret: expected at least 16 bytes, got 12"), std::string::npos) << e;
    EXPECT_EQ(e.find("short-secret"), std::string::npos) << e;
    const auto number = parse_error_of(with_notify("notify:\n  targets:\n    ops: {url: \"http://x/\", secret: 1234567}\n"), "notify.yaml");
    EXPECT_NE(number.find("notify.targets.ops.secret: expected a string"), std::string::npos) << number;
    EXPECT_EQ(number.find("1234567"), std::string::npos) << number;
}

TEST(NotifyConfig, BadThresholdsTargetsAndPoliciesAreRefusedNamingTheField) {
    const auto rule = [](const std::string& body) {
        return with_notify("notify:\n  targets:\n    ops: {url: \"http://x/\", secret: \"" + webhook_secret +
                           "\"}\n  policies:\n    " + body + "\n");
    };
    EXPECT_NE(parse_error_of(rule("api: {at: [0], target: ops}"), "notify.yaml").find("notify.policies.api.at[0]: expected a fraction"),
              std::string::npos);
    EXPECT_NE(parse_error_of(rule("api: {at: [1.5], target: ops}"), "notify.yaml").find("notify.policies.api.at[0]"), std::string::npos);
    EXPECT_NE(parse_error_of(rule("api: {at: [0.5, 0.5], target: ops}"), "notify.yaml").find("at[1]: duplicate threshold"),
              std::string::npos);
    EXPECT_NE(parse_error_of(rule("api: {at: [], target: ops}"), "notify.yaml").find("notify.policies.api.at: expected a list"),
              std::string::npos);
    EXPECT_NE(parse_error_of(rule("api: {at: [\"80%\"], target: ops}"), "notify.yaml").find("at[0]: expected a fraction"),
              std::string::npos);
    EXPECT_NE(parse_error_of(rule("api: {at: [0.8], target: pager}"), "notify.yaml")
                  .find("notify.policies.api.target: \"pager\" is not a target under notify.targets"),
              std::string::npos);
    EXPECT_NE(parse_error_of(rule("nope: {at: [0.8], target: ops}"), "notify.yaml").find("notify.policies.nope: \"nope\" is not a defined"),
              std::string::npos);
    // A lease holds no debt: a bound on a concurrency policy could never be reached.
    EXPECT_NE(parse_error_of(rule("conc: {at: [0.8], debt: 1, target: ops}"), "notify.yaml").find("notify.policies.conc.debt"),
              std::string::npos);
    EXPECT_NE(parse_error_of(rule("api: {at: [0.8], target: ops, when: always}"), "notify.yaml").find("notify.policies.api"),
              std::string::npos);
    EXPECT_NE(parse_error_of(with_notify("notify: {policies: {}}\n"), "notify.yaml").find("notify.targets: missing"), std::string::npos);
    EXPECT_NE(parse_error_of(with_notify(target("http://x/", webhook_secret, ", timeout: 2m")), "notify.yaml").find("notify.targets.ops.timeout"),
              std::string::npos);
}

TEST(NotifyConfig, ADebtBoundAloneOrBesideThresholdsReachesEveryVersion) {
    const Config c = parse_config(with_notify(R"(notify:
  targets:
    ops: {url: "http://x/", secret: ")" + webhook_secret + R"("}
  policies:
    api: {debt: 80, target: ops}
    multi: {at: [0.5], debt: 10, target: ops}
)"),
                                  "notify.yaml");
    const auto& api = c.registry.find("api")->notify;
    ASSERT_TRUE(api);
    EXPECT_EQ(api->debt, 80);
    EXPECT_TRUE(api->at.empty()) << "no thresholds: no threshold event";
    EXPECT_EQ(debt_spec(*api), "debt:80");
    EXPECT_EQ(threshold_spec(*api, 100), "");
    EXPECT_EQ(report_spec(*api, 100), ";debt:80");
    EXPECT_EQ(c.registry.plans.at("pro").policies.at("api").notify, api);
    const auto& multi = c.registry.find("multi")->notify;
    EXPECT_EQ(multi->debt, 10);
    EXPECT_EQ(multi->at, (std::vector<double>{0.5}));
    EXPECT_EQ(c.registry.find("multi")->windows[0].notify, multi);
}

TEST(NotifyConfig, BadDebtBoundsAreRefusedNamingTheKey) {
    const auto rule = [](const std::string& body) {
        return with_notify("notify:\n  targets:\n    ops: {url: \"http://x/\", secret: \"" + webhook_secret +
                           "\"}\n  policies:\n    " + body + "\n");
    };
    for (const std::string bad : {"0", "-5", "1.5", "\"500\"", "true", "[1]"}) {
        const auto e = parse_error_of(rule("api: {debt: " + bad + ", target: ops}"), "notify.yaml");
        EXPECT_NE(e.find("notify.policies.api.debt: expected a positive whole number of units of debt"),
                  std::string::npos)
            << bad << ": " << e;
    }
    // no report leaves more debt than the deepest max_debt of the policy's windows (multi: 100)
    const auto deep = parse_error_of(rule("multi: {debt: 101, target: ops}"), "notify.yaml");
    EXPECT_NE(deep.find("notify.policies.multi.debt: expected at most the policy's max_debt (100"), std::string::npos)
        << deep;
    const auto none = parse_error_of(rule("api: {target: ops}"), "notify.yaml");
    EXPECT_NE(none.find("notify.policies.api.at: missing"), std::string::npos) << none;
    EXPECT_NE(none.find("or a debt bound"), std::string::npos) << none;
}

}  // namespace
