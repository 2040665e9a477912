// ERL mode's USE_STATSD: every flush interval, the counters that moved since the last flush
// go to STATSD_HOST:STATSD_PORT as statsd lines over UDP, packed into datagrams. A thread of
// its own does it: a check only adds to a counter, and a receiver that is gone costs a failed
// send per datagram, counted, never a wait.
#pragma once

#include "ratelimitd/stats/erl_stats.hpp"
#include "ratelimitd/stats/statsd_line.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::stats {

struct StatsdOptions {
    std::string host = "localhost";
    unsigned short port = 8125;
    std::chrono::milliseconds interval{10'000};  ///< STATS_FLUSH_INTERVAL
    StatTags tags;                               ///< EXTRA_TAGS
    /// A datagram's most bytes: under a 1500-byte MTU with IP and UDP headers.
    std::size_t max_datagram = 1'400;
};

/// @par Thread Safety
/// Construction and destruction on one thread; datagrams_* and render from any.
class StatsdSink {
public:
    /// Starts the flushing thread; `stats` must outlive the sink.
    StatsdSink(ErlStats& stats, StatsdOptions options);
    /// Stops the thread after one last flush.
    ~StatsdSink();
    StatsdSink(const StatsdSink&) = delete;
    StatsdSink& operator=(const StatsdSink&) = delete;

    /// Prometheus text: datagrams sent and failed (ratelimitd_erl_statsd_datagrams_total).
    [[nodiscard]] std::string render() const;

private:
    void run();
    void flush();  // the flushing thread only
    void send(const std::string& datagram);
    bool resolve();

    ErlStats& stats_;
    const StatsdOptions options_;
    const std::string tag_suffix_;
    std::vector<std::uint64_t> sent_;  // each counter's value at the last flush, by index
    int fd_ = -1;
    std::vector<unsigned char> address_;  // the resolved sockaddr
    std::atomic<std::uint64_t> datagrams_sent_{0};
    std::atomic<std::uint64_t> datagrams_failed_{0};

    std::mutex mu_;
    std::condition_variable wake_;
    bool stop_ = false;  // guarded by mu_
    std::thread thread_;
};

}  // namespace ratelimitd::stats
