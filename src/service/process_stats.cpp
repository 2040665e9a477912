// ProcessStats: /proc/self/stat fields by their documented positions (proc(5)).
#include "ratelimitd/service/process_stats.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <vector>

namespace ratelimitd::service {

namespace {

/// The fields of /proc/self/stat after the command name, which may itself hold spaces and
/// parentheses: everything after the last ')' splits cleanly. Index 0 is field 3 (state).
std::vector<std::string> stat_fields() {
    std::ifstream in("/proc/self/stat");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    if (close == std::string::npos) return {};
    std::istringstream rest(text.substr(close + 1));
    return {std::istream_iterator<std::string>(rest), std::istream_iterator<std::string>()};
}

/// Boot time (Unix seconds) from the btime line of /proc/stat, or 0.
double boot_time() {
    std::ifstream in("/proc/stat");
    std::string key;
    while (in >> key) {
        if (key == "btime") {
            double t = 0;
            in >> t;
            return t;
        }
        in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
    return 0;
}

std::uint64_t open_fd_count() {
    std::error_code ec;
    std::uint64_t n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec)) {
        ++n;
    }
    return n > 0 ? n - 1 : 0;  // the iterator's own descriptor is listed too
}

void gauge(std::string& out, const char* name, const char* type, const char* help, double value) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name,
                   value);
}

}  // namespace

std::optional<ProcessStats> ProcessStats::read() {
    const auto f = stat_fields();
    // utime and stime are fields 14 and 15, starttime 22, vsize (bytes) 23, rss (pages) 24:
    // indexes 11, 12, 19, 20, 21.
    if (f.size() < 22) return std::nullopt;
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    ProcessStats s;
    s.cpu_seconds = (std::stod(f[11]) + std::stod(f[12])) / ticks;
    s.start_time_seconds = boot_time() + std::stod(f[19]) / ticks;
    s.virtual_bytes = static_cast<std::uint64_t>(std::stod(f[20]));
    s.resident_bytes = static_cast<std::uint64_t>(std::stod(f[21]) * page);
    s.open_fds = open_fd_count();
    rlimit lim{};
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0) s.max_fds = lim.rlim_cur;
    return s;
}

void ProcessStats::render(std::string& out) const {
    gauge(out, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
          start_time_seconds);
    gauge(out, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
          cpu_seconds);
    gauge(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
          static_cast<double>(resident_bytes));
    gauge(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
          static_cast<double>(virtual_bytes));
    gauge(out, "process_open_fds", "gauge", "Number of open file descriptors.", static_cast<double>(open_fds));
    gauge(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.", static_cast<double>(max_fds));
}

}  // namespace ratelimitd::service
