// The ratelimitd binary under test: started on a free port with a written config, stopped with
// SIGTERM, its log checked for sanitizer reports.
#include "support/ratelimitd_process.hpp"

#include "support/scratch_dir.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string_view>

namespace ratelimitd::test {

namespace {

bool mentions(const std::vector<std::string>& words, std::string_view text) {
    for (const auto& w : words) {
        if (w.find(text) != std::string::npos) return true;
    }
    return false;
}

// The test's own store deadline, when it sets one anywhere.
bool sets_store_timeout(const std::string& config_text, const std::vector<std::string>& args,
                        const std::vector<std::string>& env) {
    return config_text.find("store_timeout") != std::string::npos || mentions(args, "--store-timeout") ||
           mentions(env, "RATELIMITD_STORE_TIMEOUT=");
}

// What a sanitizer prints when it finds something (ASan, LSan, UBSan).
constexpr std::string_view sanitizer_reports[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                                  "runtime error:", "UndefinedBehaviorSanitizer"};

}  // namespace

Ratelimitd::~Ratelimitd() { stop(); }

void Ratelimitd::stop() {
    if (stopped_) return;
    stopped_ = true;
    if (child_.running()) {
        child_.signal(SIGTERM);
        const int code = child_.wait(process_start_bound);
        if (code == -1) {
            child_.signal(SIGKILL);
            child_.wait(std::chrono::seconds(5));
        }
        if (code != 0) ADD_FAILURE() << "ratelimitd on port " << port_ << " exited with " << code
                                     << " after SIGTERM (-1: still running after " << process_start_bound.count()
                                     << " s); its log:\n" << child_.log();
    }
    const std::string log = child_.log();
    for (const auto report : sanitizer_reports) {
        if (log.find(report) != std::string::npos) {
            ADD_FAILURE() << "ratelimitd on port " << port_ << " logged a sanitizer report (" << report << "):\n" << log;
            break;
        }
    }
}

Ratelimitd::Ratelimitd(const std::string& config_text, const std::string& redis_url,
                       const std::vector<std::string>& extra_args, const std::vector<std::string>& extra_env) {
    static std::atomic<int> n{0};
    const int id = n++;
    config_path_ = scratch_dir() + "/config-" + std::to_string(::getpid()) + "-" + std::to_string(id) + ".yaml";
    write_config(config_text);
    std::vector<std::string> argv{RATELIMITD_BINARY, "--config", config_path_, "--listen", "127.0.0.1:0",
                                  "--threads", "2"};
    if (!redis_url.empty()) {
        argv.push_back("--redis");
        argv.push_back(redis_url);
    }
    if (!sets_store_timeout(config_text, extra_args, extra_env)) argv.insert(argv.end(), {"--store-timeout", "2s"});
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    child_ = Child(argv, scratch_dir() + "/ratelimitd-" + std::to_string(id) + ".log", extra_env);
    const std::string line = child_.wait_for_log("listening on ", process_start_bound);
    if (line.empty()) throw std::runtime_error("ratelimitd did not start: " + child_.log());
    const auto colon = line.find(':', line.find("listening on "));
    port_ = static_cast<unsigned short>(std::stoi(line.substr(colon + 1)));
}

void Ratelimitd::write_config(const std::string& text) const {
    const std::string tmp = config_path_ + ".tmp";
    std::ofstream(tmp) << text;
    std::rename(tmp.c_str(), config_path_.c_str());
}

}  // namespace ratelimitd::test
