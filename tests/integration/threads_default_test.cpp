// The --threads default as the real binary applies it: the CPUs of its affinity mask, not the
// host's core count (a process pinned to one CPU runs one server thread).
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include <sched.h>

namespace ratelimitd::test::threads_default_test {
namespace {

using namespace std::chrono_literals;

TEST(ThreadsDefault, ProcessPinnedToOneCpuRunsOneThread) {
    cpu_set_t saved;
    ASSERT_EQ(::sched_getaffinity(0, sizeof saved, &saved), 0);
    int first = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; ++cpu) {
        if (CPU_ISSET(cpu, &saved)) first = cpu;
    }
    ASSERT_GE(first, 0);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    const std::string config = scratch_dir() + "/threads-default.yaml";
    std::ofstream(config) << "policies:\n  p:\n    algorithm: fixed_window\n    limit: 1\n    window: 1s\n";

    // The child inherits the mask it is forked with; the test's own mask is restored at once.
    ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
    Child server({RATELIMITD_BINARY, "--config", config, "--listen", "127.0.0.1:0"},
                 scratch_dir() + "/threads-default.log");
    ASSERT_EQ(::sched_setaffinity(0, sizeof saved, &saved), 0);

    const auto line = server.wait_for_log("listening on", process_start_bound);
    ASSERT_FALSE(line.empty()) << server.log();
    EXPECT_NE(line.find("threads=1"), std::string::npos) << line;
}

}  // namespace
}  // namespace ratelimitd::test::threads_default_test
