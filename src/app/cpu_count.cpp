// available_cpus(): sched_getaffinity() and the cgroup v2 / v1 CPU quota files.
#include "ratelimitd/app/cpu_count.hpp"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace ratelimitd::app {

namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_first_line(const fs::path& file) {
    std::ifstream in(file);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    return line;
}

std::optional<long long> to_number(std::string_view text) {
    long long n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return n;
}

/// "QUOTA PERIOD" from cpu.max; "max PERIOD" (no limit) or anything unreadable: nothing.
std::optional<double> quota_v2(const fs::path& dir) {
    auto line = read_first_line(dir / "cpu.max");
    if (!line) return std::nullopt;
    const auto space = line->find(' ');
    if (space == std::string::npos) return std::nullopt;
    auto quota = to_number(std::string_view(*line).substr(0, space));
    auto period = to_number(std::string_view(*line).substr(space + 1));
    if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
    return static_cast<double>(*quota) / static_cast<double>(*period);
}

/// cpu.cfs_quota_us (-1: no limit) over cpu.cfs_period_us.
std::optional<double> quota_v1(const fs::path& dir) {
    auto quota_line = read_first_line(dir / "cpu.cfs_quota_us");
    auto period_line = read_first_line(dir / "cpu.cfs_period_us");
    if (!quota_line || !period_line) return std::nullopt;
    auto quota = to_number(*quota_line);
    auto period = to_number(*period_line);
    if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
    return static_cast<double>(*quota) / static_cast<double>(*period);
}

/// The smallest quota from `base`/`cgroup` up to `base` itself, each read by `read`.
template <typename Read>
std::optional<double> smallest_up_the_tree(const fs::path& base, std::string_view cgroup, Read read) {
    std::optional<double> smallest;
    fs::path rel = fs::path(std::string(cgroup)).relative_path();
    while (true) {
        if (auto q = read(base / rel); q && (!smallest || *q < *smallest)) smallest = q;
        if (rel.empty()) break;
        rel = rel.parent_path();
    }
    return smallest;
}

std::optional<double> smaller(std::optional<double> a, std::optional<double> b) {
    if (!a) return b;
    if (!b) return a;
    return std::min(*a, *b);
}

}  // namespace

std::optional<double> cgroup_cpu_quota(const fs::path& cgroup_root, std::string_view proc_self_cgroup) {
    std::optional<double> result;
    std::istringstream lines{std::string(proc_self_cgroup)};
    std::string line;
    while (std::getline(lines, line)) {
        // "ID:CONTROLLERS:PATH"; v2 is "0::PATH", v1 names its controllers ("cpu,cpuacct").
        const auto first = line.find(':');
        const auto second = first == std::string::npos ? first : line.find(':', first + 1);
        if (second == std::string::npos) continue;
        const std::string controllers = line.substr(first + 1, second - first - 1);
        const std::string path = line.substr(second + 1);
        if (controllers.empty()) {
            result = smaller(result, smallest_up_the_tree(cgroup_root, path, quota_v2));
            result = smaller(result, smallest_up_the_tree(cgroup_root / "unified", path, quota_v2));
            continue;
        }
        std::istringstream names(controllers);
        std::string name;
        bool has_cpu = false;
        while (std::getline(names, name, ',')) has_cpu = has_cpu || name == "cpu";
        if (has_cpu) result = smaller(result, smallest_up_the_tree(cgroup_root / controllers, path, quota_v1));
    }
    return result;
}

int usable_cpus(std::size_t affinity_cpus, std::optional<double> quota) {
    auto cpus = static_cast<double>(std::max<std::size_t>(affinity_cpus, 1));
    if (quota) cpus = std::min(cpus, std::ceil(*quota));
    return std::max(1, static_cast<int>(cpus));
}

int available_cpus() {
    std::size_t affinity = std::max(1u, std::thread::hardware_concurrency());
    // A mask large enough for hosts with more than CPU_SETSIZE (1024) CPUs.
    constexpr int max_cpus = 8192;
    if (cpu_set_t* set = CPU_ALLOC(max_cpus)) {
        const std::size_t size = CPU_ALLOC_SIZE(max_cpus);
        CPU_ZERO_S(size, set);
        if (::sched_getaffinity(0, size, set) == 0) affinity = static_cast<std::size_t>(CPU_COUNT_S(size, set));
        CPU_FREE(set);
    }
    std::string proc_cgroup;
    if (std::ifstream in("/proc/self/cgroup"); in) {
        std::ostringstream text;
        text << in.rdbuf();
        proc_cgroup = text.str();
    }
    return usable_cpus(affinity, cgroup_cpu_quota("/sys/fs/cgroup", proc_cgroup));
}

}  // namespace ratelimitd::app
