// RATELIMITD_ERL_NOTIFY_FILE: the `notify:` section of a native config file, read beside ERL
// mode's runtime directory (or its xDS rules) by the loader every native file goes through;
// each refusal names the variable and the file, never a secret.
#include "erl_env_fixture.hpp"

#include "ratelimitd/erl/erl_environment.hpp"
#include "ratelimitd/erl/erl_notify_file.hpp"
#include "ratelimitd/erl/runtime_directory.hpp"
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace ratelimitd::erl {
namespace {

namespace fs = std::filesystem;

constexpr const char* secret = "erl-notify-secret-0123456789";

std::string section(const std::string& label = "llm.tokens", const std::string& secret_text = secret) {
    return "notify:\n  targets:\n    ops: {url: \"http://127.0.0.1:9/hook\", secret: \"" + secret_text +
           "\"}\n  policies:\n    " + label + ": {at: [0.8, 1.0], target: ops}\n";
}

class ErlNotifyFile : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("erl-notify-" + std::to_string(::getpid()) + "-" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::create_directories(root_ / "ratelimit" / "config");
        std::ofstream(root_ / "ratelimit" / "config" / "llm.yaml")
            << "domain: llm\ndescriptors:\n  - key: tokens\n    rate_limit: {unit: hour, requests_per_unit: 1000}\n";
        mode_.runtime = RuntimeLayout{root_.string(), "ratelimit", "config", false, false, false};
        mode_.notify_file = (root_ / "notify.yaml").string();
    }
    void TearDown() override { fs::remove_all(root_); }

    void notify_file(const std::string& text) const { std::ofstream(mode_.notify_file) << text; }
    /// The message of the refusal of the config loaded now ("" when it loads).
    std::string refusal() const {
        try {
            (void)load_erl_config(mode_);
        } catch (const policy::ConfigError& e) {
            return e.what();
        }
        return "";
    }

    fs::path root_;
    ErlMode mode_;
};

TEST_F(ErlNotifyFile, TheSectionsThresholdsHangOnTheDomainRuleOfItsLabel) {
    notify_file(section());
    const auto config = load_erl_config(mode_);
    ASSERT_TRUE(config.registry.notify);
    EXPECT_EQ(config.registry.notify->targets.count("ops"), 1u);
    const auto* domain = config.registry.domains->find("llm");
    ASSERT_NE(domain, nullptr);
    ASSERT_EQ(domain->root.rules.size(), 1u);
    const auto& rule = domain->root.rules.front().policy.notify;
    ASSERT_TRUE(rule);
    EXPECT_EQ(rule->policy, "llm.tokens");
    EXPECT_EQ(rule->at, (std::vector<double>{0.8, 1.0}));
    EXPECT_EQ(rule->target->secret, secret);
}

TEST_F(ErlNotifyFile, WithoutTheVariableNoRuleHasThresholds) {
    mode_.notify_file.clear();
    const auto config = load_erl_config(mode_);
    EXPECT_FALSE(config.registry.notify);
    EXPECT_FALSE(config.registry.domains->find("llm")->root.rules.front().policy.notify);
}

// CONFIG_TYPE=GRPC_XDS_SOTW: the labels wait for the rules the control plane sends.
TEST_F(ErlNotifyFile, WithXdsRulesTheLabelsAreKeptForTheRulesToCome) {
    mode_.runtime.reset();
    notify_file(section("eg.route.tokens"));
    const auto config = load_erl_config(mode_);
    ASSERT_TRUE(config.registry.notify);
    EXPECT_EQ(config.registry.notify->xds_labels.count("eg.route.tokens"), 1u);
}

TEST_F(ErlNotifyFile, EachRefusalNamesTheVariableTheFileAndWhatIsWrongButNoSecret) {
    const std::string named = "RATELIMITD_ERL_NOTIFY_FILE \"" + mode_.notify_file + "\": ";
    notify_file(section("llm.nothing"));
    EXPECT_EQ(refusal(), named + "notify.policies.llm.nothing: \"llm.nothing\" is not a defined policy or the label "
                                 "of a limited Envoy domain rule");
    notify_file(section("llm.tokens", "short-secret"));
    EXPECT_EQ(refusal(), named + "notify.targets.ops.secret: expected at least 16 bytes, got 12");
    notify_file(section() + "policies: {}\n");
    EXPECT_EQ(refusal(), named + "expected a map with the one key notify (the section of a native config file), got "
                                 "a map of 2 keys");
    notify_file(std::string("notify: {targets: {ops: {url: \"http://h/\", secret: \"") + secret + "\"}");
    const std::string syntax = refusal();
    EXPECT_EQ(syntax.rfind("RATELIMITD_ERL_NOTIFY_FILE: " + mode_.notify_file + ": ", 0), 0u) << syntax;
    EXPECT_EQ(syntax.find(secret), std::string::npos) << syntax;
    fs::remove(mode_.notify_file);
    EXPECT_EQ(refusal(), "RATELIMITD_ERL_NOTIFY_FILE: " + mode_.notify_file + ": cannot read: No such file or directory");
    notify_file("notify:\n  x: \"" + std::string(max_notify_file_bytes, 'a') + "\"\n");
    EXPECT_EQ(refusal(), named + "larger than 1024 KiB");
}

TEST(ErlNotifyVariable, ItsPathIsTakenFromTheWorkingDirectoryAndAnEmptyOneIsRefused) {
    auto vars = testing::deployment_env();
    vars["RATELIMITD_ERL_NOTIFY_FILE"] = "notify/webhooks.yaml";
    const auto mode = map_erl_environment(testing::lookup(vars), "/srv");
    ASSERT_TRUE(mode.has_value()) << mode.error().detail;
    EXPECT_EQ(mode->notify_file, "/srv/notify/webhooks.yaml");
    EXPECT_EQ(mode->overlay.count("RATELIMITD_ERL_NOTIFY_FILE"), 0u) << "not a setting: ERL mode's own";
    vars["RATELIMITD_ERL_NOTIFY_FILE"] = "";
    const auto empty = map_erl_environment(testing::lookup(vars), "/srv");
    ASSERT_FALSE(empty.has_value());
    EXPECT_EQ(empty.error().detail,
              "RATELIMITD_ERL_NOTIFY_FILE: expected a file holding a notify: section, got an empty value");
    vars.erase("RATELIMITD_ERL_NOTIFY_FILE");
    const auto without = map_erl_environment(testing::lookup(vars), "/srv");
    ASSERT_TRUE(without.has_value());
    EXPECT_EQ(without->notify_file, "");
}

}  // namespace
}  // namespace ratelimitd::erl
