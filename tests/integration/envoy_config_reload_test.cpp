// envoy_config against the real binary: a registry of Envoy rules alone starts; a broken
// envoyproxy/ratelimit file is refused at start (--check-config and a plain start, naming
// that file and the field) and on SIGHUP, where the previous rules keep serving; a fixed
// directory is taken on the next SIGHUP.
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <signal.h>

namespace ratelimitd::test::envoy_config_reload_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string domain_a = "domain: a\ndescriptors:\n  - key: ip\n    rate_limit: {unit: second, requests_per_unit: 5}\n";
const std::string domain_b = "domain: b\ndescriptors:\n  - key: ip\n    rate_limit: {unit: minute, requests_per_unit: 9}\n";
const std::string broken_a =
    "domain: a\ndescriptors:\n  - key: ip\n    rate_limit: {unit: fortnight, requests_per_unit: 5}\n";

void write_file(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

fs::path fresh_dir(const std::string& name) {
    const fs::path dir = fs::path(scratch_dir()) / name;
    fs::remove_all(dir);
    fs::create_directories(dir / "rules");
    return dir;
}

int run_binary(const std::vector<std::string>& args, std::string* output) {
    std::vector<std::string> argv{RATELIMITD_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    Child child(argv, scratch_dir() + "/envoy-cli-" + std::to_string(free_port()) + ".log");
    const int code = child.wait(process_start_bound);
    if (output) *output = child.log();
    return code;
}

TEST(EnvoyConfigFiles, ABrokenFileIsRefusedAtStartNamingItAndTheField) {
    const auto dir = fresh_dir("envoy-start");
    write_file(dir / "rules" / "a.yaml", broken_a);
    write_file(dir / "config.yaml", "envoy_config: rules\n");
    const std::string expected = (dir / "rules" / "a.yaml").string() +
                                 ": descriptors[0].rate_limit.unit: expected one of second, minute, hour, day, "
                                 "week, month, year, got \"fortnight\"";
    std::string out;
    EXPECT_EQ(run_binary({"--check-config", (dir / "config.yaml").string()}, &out), 1) << out;
    EXPECT_NE(out.find(expected), std::string::npos) << out;
    EXPECT_EQ(run_binary({"--config", (dir / "config.yaml").string(), "--listen", "127.0.0.1:0"}, &out), 1) << out;
    EXPECT_NE(out.find(expected), std::string::npos) << out;
}

TEST(EnvoyConfigFiles, AreReloadedWithTheRegistryAndABadVersionIsRefused) {
    const auto dir = fresh_dir("envoy-reload");
    write_file(dir / "rules" / "a.yaml", domain_a);
    const std::string config = "envoy_config: " + (dir / "rules").string() + "\n";
    Ratelimitd server(config, "", {"--watch-config", "off"});

    write_file(dir / "rules" / "a.yaml", broken_a);
    server.process().signal(SIGHUP);
    const auto refused = server.process().wait_for_log("reload refused", 10s);
    ASSERT_FALSE(refused.empty()) << server.process().log();
    EXPECT_NE(refused.find((dir / "rules" / "a.yaml").string() + ": descriptors[0].rate_limit.unit"),
              std::string::npos)
        << refused;

    write_file(dir / "rules" / "a.yaml", domain_a);
    write_file(dir / "rules" / "b.yml", domain_b);
    server.process().signal(SIGHUP);
    EXPECT_FALSE(server.process().wait_for_log("policies=0 domains=2", 10s).empty()) << server.process().log();
}

}  // namespace
}  // namespace ratelimitd::test::envoy_config_reload_test
