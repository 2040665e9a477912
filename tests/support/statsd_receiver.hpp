// A statsd receiver for tests: a UDP socket on a free loopback port whose thread sums the
// counter lines it gets ("name:delta|c") by name, as a statsd server adds them up.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::test {

class StatsdReceiver {
public:
    StatsdReceiver();
    ~StatsdReceiver();
    StatsdReceiver(const StatsdReceiver&) = delete;
    StatsdReceiver& operator=(const StatsdReceiver&) = delete;

    unsigned short port() const { return port_; }
    /// Waits up to `limit` until `done(totals)` holds; the last totals either way.
    std::map<std::string, std::uint64_t> wait_for(
        const std::function<bool(const std::map<std::string, std::uint64_t>&)>& done, std::chrono::milliseconds limit);
    /// Every line received, in order (a malformed one too, so a test can name it).
    std::vector<std::string> lines() const;

private:
    void run();

    int fd_ = -1;
    int wake_[2] = {-1, -1};  // a pipe that ends run()
    unsigned short port_ = 0;
    mutable std::mutex mu_;
    std::condition_variable changed_;
    std::map<std::string, std::uint64_t> totals_;
    std::vector<std::string> lines_;
    std::thread thread_;
};

}  // namespace ratelimitd::test
