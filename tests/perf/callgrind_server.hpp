// The real ratelimitd binary under callgrind, for the instruction ceilings: started with the
// embedded store on one thread, its counts zeroed and dumped around the requests a test sends
// (callgrind_control -z / -d), and the dump read back: user-space instructions (every thread)
// and calls into the C allocator. A count is the same on a loaded machine as on an idle one.
#pragma once

#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace ratelimitd::test::perf {

/// What one dump holds.
struct CallgrindCounts {
    std::uint64_t instructions = 0;  ///< Ir, every thread
    std::uint64_t allocations = 0;   ///< calls of malloc, calloc, realloc, memalign, aligned_alloc, posix_memalign
};

class CallgrindServer {
public:
    /// True where the ceilings can be measured: valgrind and callgrind_control installed.
    static bool available() {
        return std::system("command -v valgrind >/dev/null 2>&1 && command -v callgrind_control >/dev/null 2>&1") == 0;
    }

    explicit CallgrindServer(const std::string& config_text) {
        static int n = 0;
        const std::string base = scratch_dir() + "/callgrind-" + std::to_string(n++);
        config_path_ = base + ".yaml";
        std::ofstream(config_path_) << config_text;
        out_pattern_ = base + ".out";
        child_ = Child({"valgrind", "--tool=callgrind", "--callgrind-out-file=" + out_pattern_ + ".%p", RATELIMITD_BINARY,
                        "--config", config_path_, "--listen", "127.0.0.1:0", "--threads", "1"},
                       base + ".log");
        const std::string line = child_.wait_for_log("listening on", process_start_bound);
        std::smatch m;
        if (!std::regex_search(line, m, std::regex(R"(listening on [0-9.]+:([0-9]+))"))) {
            ADD_FAILURE() << "ratelimitd under valgrind did not start:\n" << child_.log();
            return;
        }
        port_ = static_cast<unsigned short>(std::stoi(m[1]));
    }

    ~CallgrindServer() {
        child_.signal(SIGTERM);
        child_.wait(std::chrono::seconds(30));
    }

    CallgrindServer(const CallgrindServer&) = delete;
    CallgrindServer& operator=(const CallgrindServer&) = delete;

    unsigned short port() const { return port_; }

    /// Counts from zero again.
    void zero() { control("-z"); }

    /// Dumps the counts since zero() and reads them.
    CallgrindCounts dump() {
        control("-d");
        return read_dump(out_pattern_ + "." + std::to_string(child_.pid()) + "." + std::to_string(++dumps_));
    }

private:
    void control(const std::string& what) const {
        const std::string command = "callgrind_control " + what + " " + std::to_string(child_.pid()) + " >/dev/null 2>&1";
        EXPECT_EQ(std::system(command.c_str()), 0) << command;
    }

    // The callgrind format: "fn=(id) name" / "cfn=(id) name" name a function (later only by
    // its id), "calls=N ..." follows a cfn= line.
    //
    // The instructions are the "summary:" line's, never the "totals:" line's. callgrind writes
    // summary: from each thread's running count, less that count at the zero (-z sets every
    // thread's mark; with one file for all threads the line adds up every thread, an exited
    // one's too): what ran between zero() and dump(). totals: is the sum of the cost lines
    // written, and those hold more: a call site's costs of skipped code (--skip-plt=yes, the
    // default: the PLT stubs) are kept in the caller's block apart, cleared only
    // when a dump writes them, not by -z (callgrind/bbcc.c zero_bbcc leaves them), so the first
    // dump after a zero also carries every such cost since the process started. That excess
    // depends on what ran before the zero (40,000 to 53,000 instructions in the trace bench's
    // runs, once over a million), not on the requests counted. With --skip-plt=no the two
    // lines agree to the instruction.
    static CallgrindCounts read_dump(const std::string& path) {
        static const std::set<std::string, std::less<>> allocators{"malloc",   "calloc",        "realloc",
                                                                   "memalign", "aligned_alloc", "posix_memalign"};
        static const std::regex named(R"(^c?fn=\((\d+)\)(?: (.*))?$)");
        std::ifstream in(path);
        EXPECT_TRUE(in.good()) << "no callgrind dump at " << path;
        std::map<std::string, std::string> names;
        CallgrindCounts counts;
        bool calling_allocator = false;
        bool in_allocator = false;  // the current caller is the allocator itself (memalign -> malloc)
        bool read_summary = false;
        for (std::string line; std::getline(in, line);) {
            std::smatch m;
            const bool names_function = line.starts_with("fn=") || line.starts_with("cfn=");
            if (names_function && std::regex_match(line, m, named)) {
                if (m[2].matched) names[m[1]] = m[2];
                const std::string& name = names[m[1]];
                if (line.starts_with("fn=")) {
                    in_allocator = allocators.contains(name) || name.starts_with("_mid_memalign") ||
                                   name.starts_with("__libc_") || name.starts_with("_int_");
                }
                calling_allocator = line.starts_with("cfn=") && allocators.contains(name) && !in_allocator;
            } else if (line.starts_with("calls=")) {
                if (calling_allocator) counts.allocations += std::stoull(line.substr(6));
            } else if (line.starts_with("summary:")) {
                counts.instructions = std::stoull(line.substr(line.find(':') + 1));
                read_summary = true;
            }
        }
        EXPECT_TRUE(read_summary) << "no summary: line in " << path;
        return counts;
    }

    std::string config_path_;
    std::string out_pattern_;
    Child child_;
    unsigned short port_ = 0;
    int dumps_ = 0;
};

}  // namespace ratelimitd::test::perf
