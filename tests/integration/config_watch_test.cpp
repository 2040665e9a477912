// Reload on file change: the real binary notices an editor's save-by-rename and a Kubernetes
// ConfigMap update (the ..data symlink swap), applies a valid file as SIGHUP does and refuses a
// bad one while the old config keeps serving. Each step awaits /v1/policies or a log line.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include <signal.h>

namespace ratelimitd::test::config_watch_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

std::string config_with(const std::string& policy) {
    return "policies:\n  " + policy + ":\n    algorithm: fixed_window\n    limit: 3\n    window: 60s\n";
}
const std::string broken = "policies:\n  demo:\n    algorithm: fixed_window\n    limit: -1\n    window: 60s\n";

void write_file(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

bool serves_policy(unsigned short port, const std::string& name) {
    HttpClient c(port);
    const auto res = c.get("/v1/policies");
    if (res.status != 200) return false;
    return json::parse(res.body)["policies"].contains(name);
}

int allowed_of(unsigned short port, const std::string& policy, const std::string& tenant, int attempts) {
    HttpClient c(port);
    int allowed = 0;
    for (int i = 0; i < attempts; ++i) {
        allowed += c.post("/v1/check", R"({"policy":")" + policy + R"(","tenant":")" + tenant + R"("})").status == 200;
    }
    return allowed;
}

fs::path fresh_dir(const std::string& name) {
    const fs::path dir = fs::path(scratch_dir()) / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

TEST(ConfigWatch, EditorSaveByRenameReloadsAndABadSaveIsRefused) {
    const auto dir = fresh_dir("watch-rename");
    const auto file = dir / "config.yaml";
    write_file(file, config_with("first"));
    Ratelimitd server(config_with("unused"), "", {"--config", file.string()});
    ASSERT_TRUE(serves_policy(server.port(), "first"));

    write_file(dir / ".config.yaml.swp", config_with("second"));
    fs::rename(dir / ".config.yaml.swp", file);
    ASSERT_TRUE(wait_until([&] { return serves_policy(server.port(), "second"); }, 10s)) << server.process().log();
    EXPECT_FALSE(server.process().wait_for_log("changed on disk: reloading", process_start_bound).empty());
    EXPECT_EQ(allowed_of(server.port(), "second", "t", 4), 3);

    write_file(dir / ".config.yaml.swp", broken);
    fs::rename(dir / ".config.yaml.swp", file);
    const auto line = server.process().wait_for_log("reload refused", 10s);
    ASSERT_FALSE(line.empty()) << server.process().log();
    EXPECT_NE(line.find("policies.demo.limit"), std::string::npos) << line;
    EXPECT_TRUE(serves_policy(server.port(), "second"));
    EXPECT_EQ(allowed_of(server.port(), "second", "t", 1), 0) << "the old registry and its counters keep serving";
}

TEST(ConfigWatch, ConfigMapDataSymlinkSwapReloadsAndABadVersionIsRefused) {
    // The kubelet's layout: config.yaml -> ..data/config.yaml, ..data -> ..<version>/.
    const auto dir = fresh_dir("watch-configmap");
    const auto publish = [&dir](const std::string& version, const std::string& text) {
        fs::create_directory(dir / version);
        write_file(dir / version / "config.yaml", text);
        fs::create_directory_symlink(version, dir / "..data_tmp");
        fs::rename(dir / "..data_tmp", dir / "..data");
    };
    publish("..v1", config_with("first"));
    fs::create_symlink("..data/config.yaml", dir / "config.yaml");
    Ratelimitd server(config_with("unused"), "", {"--config", (dir / "config.yaml").string()});
    ASSERT_TRUE(serves_policy(server.port(), "first"));

    publish("..v2", config_with("second"));
    fs::remove_all(dir / "..v1");
    ASSERT_TRUE(wait_until([&] { return serves_policy(server.port(), "second"); }, 10s)) << server.process().log();

    publish("..v3", broken);
    fs::remove_all(dir / "..v2");
    ASSERT_FALSE(server.process().wait_for_log("reload refused", 10s).empty()) << server.process().log();
    EXPECT_TRUE(serves_policy(server.port(), "second"));
    EXPECT_EQ(allowed_of(server.port(), "second", "t", 4), 3);
}

TEST(ConfigWatch, WatchConfigOffLeavesReloadToSighup) {
    const auto dir = fresh_dir("watch-off");
    const auto file = dir / "config.yaml";
    write_file(file, config_with("first"));
    Ratelimitd server(config_with("unused"), "", {"--config", file.string(), "--watch-config", "off"});
    write_file(dir / "config.yaml.tmp", config_with("second"));
    fs::rename(dir / "config.yaml.tmp", file);
    EXPECT_TRUE(serves_policy(server.port(), "first"));
    server.process().signal(SIGHUP);
    ASSERT_FALSE(server.process().wait_for_log("reloaded", 10s).empty()) << server.process().log();
    EXPECT_TRUE(serves_policy(server.port(), "second"));
    EXPECT_EQ(server.process().log().find("changed on disk"), std::string::npos);
}

}  // namespace
}  // namespace ratelimitd::test::config_watch_test
