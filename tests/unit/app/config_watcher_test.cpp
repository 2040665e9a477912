// ConfigWatcher: one call per new version of the file, however it is replaced; none for
// other files in the directory. Real inotify on a scratch directory, no sleeps.
#include "ratelimitd/app/config_watcher.hpp"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

namespace ratelimitd::app {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

void write_file(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

class ConfigWatcherTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/ratelimitd-watch-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }

    // `version_read`: as the start passes it, the file's fingerprint before it read the file.
    void watch(const fs::path& file, std::optional<std::string> version_read = std::nullopt) {
        watcher_.emplace(io_.get_executor(), file, [this] { ++calls_; });
        ASSERT_TRUE(watcher_->start(std::move(version_read)));
    }

    // Runs the io_context until `calls_` reaches `n` (or 5 s pass); returns the count.
    int run_until_calls(int n) {
        const auto until = std::chrono::steady_clock::now() + 5s;
        while (calls_ < n && std::chrono::steady_clock::now() < until) io_.run_one_until(until);
        return calls_;
    }

    boost::asio::io_context io_;
    std::optional<ConfigWatcher> watcher_;
    int calls_ = 0;
    fs::path dir_;
};

TEST_F(ConfigWatcherTest, SaveByRenameIsOneChange) {
    const auto file = dir_ / "config.yaml";
    write_file(file, "a: 1\n");
    watch(file);
    write_file(dir_ / ".config.yaml.swp", "a: 2\n");  // an editor's temporary file: no call
    fs::rename(dir_ / ".config.yaml.swp", file);
    EXPECT_EQ(run_until_calls(1), 1);
    write_file(dir_ / "config.yaml.tmp", "a: 3\n");
    fs::rename(dir_ / "config.yaml.tmp", file);
    EXPECT_EQ(run_until_calls(2), 2);
}

TEST_F(ConfigWatcherTest, WriteInPlaceIsOneChangeWhenClosed) {
    const auto file = dir_ / "config.yaml";
    write_file(file, "a: 1\n");
    watch(file);
    write_file(file, "a: 22\n");
    EXPECT_EQ(run_until_calls(1), 1);
    // A later change proves nothing else was queued for the first one.
    write_file(file, "a: 333\n");
    EXPECT_EQ(run_until_calls(2), 2);
}

// Issue 31: `cat a > f; cat b >> f` closes the file twice; the call waits for the last step.
TEST_F(ConfigWatcherTest, AFileWrittenInTwoStepsIsOneChangeAfterTheLastStep) {
    const auto file = dir_ / "config.yaml";
    write_file(file, "a: 1\n");
    watch(file);
    write_file(file, "a: 2\n");
    io_.run_for(config_quiet_time / 2);  // a pause between the steps, shorter than the quiet time
    EXPECT_EQ(calls_, 0) << "the first step alone is not read";
    std::ofstream(file, std::ios::app) << "b: 3\n";
    EXPECT_EQ(run_until_calls(1), 1);
    io_.run_for(config_quiet_time * 2);
    EXPECT_EQ(calls_, 1);
}

TEST_F(ConfigWatcherTest, KubernetesConfigMapDataSymlinkSwap) {
    // The layout the kubelet writes: config.yaml -> ..data/config.yaml, ..data -> ..<timestamp>.
    fs::create_directory(dir_ / "..2026_01");
    write_file(dir_ / "..2026_01" / "config.yaml", "a: 1\n");
    fs::create_directory_symlink("..2026_01", dir_ / "..data");
    fs::create_symlink("..data/config.yaml", dir_ / "config.yaml");
    watch(dir_ / "config.yaml");

    fs::create_directory(dir_ / "..2026_02");
    write_file(dir_ / "..2026_02" / "config.yaml", "a: 2\n");
    fs::create_directory_symlink("..2026_02", dir_ / "..data_tmp");
    fs::rename(dir_ / "..data_tmp", dir_ / "..data");  // the atomic swap
    fs::remove_all(dir_ / "..2026_01");
    EXPECT_EQ(run_until_calls(1), 1);
}

TEST_F(ConfigWatcherTest, OtherFilesInTheDirectoryChangeNothing) {
    const auto file = dir_ / "config.yaml";
    write_file(file, "a: 1\n");
    watch(file);
    // A second watcher on another file of the same directory tells when the events are read.
    int probe_calls = 0;
    ConfigWatcher probe(io_.get_executor(), dir_ / "moved.yaml", [&] { ++probe_calls; });
    ASSERT_TRUE(probe.start());
    write_file(dir_ / "other.yaml", "b: 1\n");
    fs::create_symlink("other.yaml", dir_ / "link.yaml");
    fs::rename(dir_ / "other.yaml", dir_ / "moved.yaml");
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (probe_calls == 0 && std::chrono::steady_clock::now() < until) io_.run_one_until(until);
    ASSERT_EQ(probe_calls, 1);
    io_.poll();  // the config watcher's read of the same events is ready too
    EXPECT_EQ(calls_, 0) << "events about other files are not a change of the config file";
    write_file(file, "a: 2\n");
    EXPECT_EQ(run_until_calls(1), 1);
}

// The start read the file, then it changed before the watch was armed: no event tells of it,
// the version read does.
TEST_F(ConfigWatcherTest, AChangeBeforeTheWatchStartsIsOneChange) {
    const auto file = dir_ / "config.yaml";
    write_file(file, "a: 1\n");
    const auto version_read = ConfigWatcher::file_identity(file);
    write_file(file, "a: 22\n");
    watch(file, version_read);
    EXPECT_EQ(run_until_calls(1), 1);
    write_file(file, "a: 333\n");
    EXPECT_EQ(run_until_calls(2), 2);
}

TEST_F(ConfigWatcherTest, AnUnchangedFileSinceTheReadIsNoChange) {
    const auto file = dir_ / "config.yaml";
    write_file(file, "a: 1\n");
    watch(file, ConfigWatcher::file_identity(file));
    io_.run_for(2 * config_quiet_time);
    EXPECT_EQ(calls_, 0) << "the version read is the one watched";
    write_file(file, "a: 22\n");
    EXPECT_EQ(run_until_calls(1), 1);
}

TEST_F(ConfigWatcherTest, MissingDirectoryCannotBeWatched) {
    ConfigWatcher watcher(io_.get_executor(), dir_ / "absent" / "config.yaml", [] {});
    EXPECT_FALSE(watcher.start());
}

}  // namespace
}  // namespace ratelimitd::app
