// How many CPUs this process may actually use: the affinity mask and the cgroup CPU quota,
// not the host's core count (a 0.5-CPU pod on a 64-core node gets 1 thread, not 64).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string_view>

namespace ratelimitd::app {

/// The CPU quota of the cgroup named for this process in `proc_self_cgroup` (the text of
/// /proc/self/cgroup), read from the hierarchy mounted at `cgroup_root` (/sys/fs/cgroup):
/// cgroup v2 `cpu.max` ("QUOTA PERIOD" or "max ..."), at the root or under unified/ (hybrid
/// hosts), else cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (-1: none). The smallest
/// quota on the way from the process's cgroup up to the root wins, as the kernel enforces
/// each ancestor's; a path that is not there (a container's own cgroup mounted as the root)
/// is skipped. Returns CPUs as a fraction (50000/100000 -> 0.5), or nothing without a quota.
/// Reads files only; never throws.
std::optional<double> cgroup_cpu_quota(const std::filesystem::path& cgroup_root, std::string_view proc_self_cgroup);

/// Whole CPUs for `affinity_cpus` usable cores under `quota`: the quota rounded up, never
/// more than the affinity mask allows, never less than 1. Pure.
int usable_cpus(std::size_t affinity_cpus, std::optional<double> quota);

/// usable_cpus() for this process: sched_getaffinity() and /proc/self/cgroup under
/// /sys/fs/cgroup. Falls back to std::thread::hardware_concurrency() when the mask cannot be
/// read. The default for --threads. Never throws.
int available_cpus();

}  // namespace ratelimitd::app
