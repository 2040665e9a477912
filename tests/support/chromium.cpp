// Each call runs one Chromium with a fresh profile (nothing carried between pages), no GPU,
// no network of its own beyond the page (no component updates, sync or QUIC probes).
#include "support/chromium.hpp"

#include "support/processes.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ratelimitd::test {
namespace {

using namespace std::chrono_literals;

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }  // the tests' own paths and URLs

// Runs chromium with `args`, stdout to `out`; returns its exit code (90 s at most).
int run_chromium(const std::string& args, const std::string& out) {
    static std::atomic<int> runs{0};
    const std::string profile = scratch_dir() + "/chromium-profile-" + std::to_string(++runs);
    const std::string command =
        "chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
        "--disable-background-networking --disable-component-update --disable-sync --hide-scrollbars "
        "--user-data-dir=" + quoted(profile) + " " + args + " >" + quoted(out) + " 2>" + quoted(out + ".err");
    Child child({"/bin/sh", "-c", command}, out + ".log");
    const int code = child.wait(90s);
    EXPECT_EQ(code, 0) << slurp(out + ".err");
    return code;
}

std::string budget(int budget_ms) {
    return budget_ms > 0 ? " --virtual-time-budget=" + std::to_string(budget_ms) : "";
}

}  // namespace

bool chromium_installed() { return std::filesystem::exists("/usr/bin/chromium"); }

std::string artefact_dir() {
    // The test binaries' build dir holds the server binary: its folder is the build dir.
    const std::string dir = std::filesystem::path(RATELIMITD_BINARY).parent_path().string() + "/test-artefacts";
    std::filesystem::create_directories(dir);
    return dir;
}

std::string chromium_dom(const std::string& url, int budget_ms) {
    static std::atomic<int> dumps{0};
    const std::string out = scratch_dir() + "/chromium-dom-" + std::to_string(++dumps) + ".html";
    if (run_chromium("--dump-dom" + budget(budget_ms) + " " + quoted(url), out) != 0) return "";
    return slurp(out);
}

std::string chromium_screenshot(const std::string& url, const std::string& name, int width, int height,
                                int budget_ms) {
    const std::string png = artefact_dir() + "/" + name;
    std::filesystem::remove(png);
    const std::string args = "--screenshot=" + quoted(png) + " --window-size=" + std::to_string(width) + "," +
                             std::to_string(height) + budget(budget_ms) + " " + quoted(url);
    if (run_chromium(args, scratch_dir() + "/chromium-shot-" + name + ".out") != 0) return "";
    return std::filesystem::exists(png) ? png : "";
}

}  // namespace ratelimitd::test
