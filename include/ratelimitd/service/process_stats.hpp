// The standard process_* series, read from /proc/self at scrape time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ratelimitd::service {

/// What Prometheus' client libraries call the process collector, for this process.
struct ProcessStats {
    double start_time_seconds = 0;      ///< Unix time the process started
    double cpu_seconds = 0;             ///< user + system time of every thread
    std::uint64_t resident_bytes = 0;
    std::uint64_t virtual_bytes = 0;    ///< Envoy Gateway's rate limit dashboard plots it beside RSS
    std::uint64_t open_fds = 0;
    std::uint64_t max_fds = 0;          ///< the soft RLIMIT_NOFILE

    /// Reads /proc/self/stat, /proc/stat (boot time), /proc/self/fd and the fd limit;
    /// nothing when /proc cannot be read (the series are then left out of the scrape).
    static std::optional<ProcessStats> read();

    /// Appends the six process_* families (HELP, TYPE and one sample each).
    void render(std::string& out) const;
};

}  // namespace ratelimitd::service
