// The runtime directory listed as envoyproxy/ratelimit's file provider lists it, and loaded
// through the ordinary loader (MERGE_DOMAIN_CONFIG, STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT).
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

class RuntimeDirectory : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("erl-runtime-" + std::to_string(::getpid()) + "-" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::create_directories(root_ / "ratelimit" / "config");
    }
    void TearDown() override { fs::remove_all(root_); }

    void write(const fs::path& relative, const std::string& domain, const std::string& key = "k") {
        fs::create_directories((root_ / relative).parent_path());
        std::ofstream(root_ / relative) << "domain: " << domain << "\ndescriptors:\n  - key: " << key
                                        << "\n    rate_limit: {unit: minute, requests_per_unit: 5}\n";
    }
    RuntimeLayout layout(bool watch_root, bool ignore_dot_files) const {
        RuntimeLayout l;
        l.root = root_.string();
        l.subdirectory = "ratelimit";
        l.app_directory = "config";
        l.ignore_dot_files = ignore_dot_files;
        l.watch_root = watch_root;
        return l;
    }
    static ErlMode mode_of(const RuntimeLayout& l) {
        ErlMode mode;
        mode.runtime = l;
        return mode;
    }
    std::vector<std::string> names(const RuntimeLayout& l) const {
        std::vector<std::string> out;
        for (const auto& f : runtime_config_files(l)) out.push_back(fs::path(f).lexically_relative(root_).string());
        return out;
    }

    fs::path root_;
};

TEST_F(RuntimeDirectory, EveryFileBelowTheConfigDirectoryWhateverItsName) {
    write("ratelimit/config/a.yaml", "a");
    write("ratelimit/config/nested/b.conf", "b");
    write("ratelimit/other.yaml", "c");
    write("ratelimit/config.d.yaml", "d");  // its runtime key starts with "config." too
    EXPECT_EQ(names(layout(false, false)),
              (std::vector<std::string>{"ratelimit/config/a.yaml", "ratelimit/config/nested/b.conf"}));
    EXPECT_EQ(names(layout(true, false)),
              (std::vector<std::string>{"ratelimit/config.d.yaml", "ratelimit/config/a.yaml",
                                        "ratelimit/config/nested/b.conf"}));
}

// A ConfigMap volume: files are symlinks through ..data to a timestamped directory.
TEST_F(RuntimeDirectory, AConfigMapMountIsReadThroughItsFileLinksOnce) {
    const fs::path config = root_ / "ratelimit" / "config";
    write("ratelimit/config/..2026_12_02_10_00_00.1/rules.yaml", "d");
    fs::create_directory_symlink("..2026_12_02_10_00_00.1", config / "..data");
    fs::create_symlink("..data/rules.yaml", config / "rules.yaml");
    EXPECT_EQ(names(layout(false, true)), (std::vector<std::string>{"ratelimit/config/rules.yaml"}));
    // Without RUNTIME_IGNOREDOTFILES the timestamped copy is a second file of the same domain,
    // as envoyproxy/ratelimit reads it (and refuses it, without MERGE_DOMAIN_CONFIG).
    EXPECT_EQ(names(layout(false, false)).size(), 2u);
    EXPECT_THROW(load_erl_config(mode_of(layout(false, false))), policy::ConfigError);
}

TEST_F(RuntimeDirectory, OneDomainInTwoFilesIsRefusedUnlessMerged) {
    write("ratelimit/config/a.yaml", "shared", "a");
    write("ratelimit/config/b.yaml", "shared", "b");
    ErlMode mode = mode_of(layout(false, true));
    try {
        load_erl_config(mode);
        FAIL() << "a duplicate domain loaded";
    } catch (const policy::ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("duplicate domain \"shared\""), std::string::npos) << e.what();
    }
    mode.runtime->merge_domains = true;
    const auto config = load_erl_config(mode);
    ASSERT_TRUE(config.registry.domains);
    const auto* domain = config.registry.domains->find("shared");
    ASSERT_NE(domain, nullptr);
    EXPECT_EQ(domain->root.rules.size(), 2u);
    EXPECT_TRUE(config.registry.domains->charge_denied);
    // The same key in both files is refused even when merging, as within one file.
    write("ratelimit/config/b.yaml", "shared", "a");
    EXPECT_THROW(load_erl_config(mode), policy::ConfigError);
}

TEST_F(RuntimeDirectory, NoFilesIsAConfigWithoutDomainsAndAMissingDirectoryIsRefused) {
    ErlMode mode = mode_of(layout(false, true));
    mode.charge_denied = false;
    const auto config = load_erl_config(mode);
    ASSERT_TRUE(config.registry.domains);
    EXPECT_TRUE(config.registry.domains->by_name.empty());
    EXPECT_FALSE(config.registry.domains->charge_denied);
    fs::remove_all(root_ / "ratelimit");
    try {
        load_erl_config(mode);
        FAIL() << "a missing directory loaded";
    } catch (const policy::ConfigError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("RUNTIME_ROOT: cannot read ", 0), 0u) << e.what();
    }
}

}  // namespace
}  // namespace ratelimitd::erl
