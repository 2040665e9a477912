// Slowloris: hundreds of connections trickling a request that never ends (and some that
// send nothing) cannot slow a normal client down, and the server closes every one of them
// once the request timeout has passed.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/raw_connection.hpp"

#include <gtest/gtest.h>

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace ratelimitd::test::slowloris_test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const char* const config = R"(
policies:
  demo:
    algorithm: token_bucket
    limit: 1000000
    window: 1s
)";

// Far below the default max_connections and the test's own descriptor limit.
constexpr int trickling = 250;
constexpr int silent = 50;
constexpr auto request_timeout = 1s;
// A request line and headers that never end: one byte of it every 100 ms.
const std::string endless = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(4096, 'a');

/// When each slow connection was closed (zero: never), and how many are still open.
struct Closes {
    std::vector<Clock::duration> closed_after;
    std::size_t open;
};

/// Trickles until every slow connection is closed by the server, or a bound well past the
/// timeout. poll() waits for a close (readable: end of stream or reset) between bytes.
Closes trickle_until_closed(std::vector<RawConnection>& slow, Clock::time_point started) {
    Closes out{std::vector<Clock::duration>(slow.size(), Clock::duration::zero()), slow.size()};
    std::size_t offset = 0;
    auto next_byte = Clock::now();
    const auto deadline = started + request_timeout + 4s;
    while (out.open > 0 && Clock::now() < deadline) {
        if (Clock::now() >= next_byte && offset < endless.size()) {
            for (int i = 0; i < trickling; ++i) {
                if (!slow[i].closed()) slow[i].send(std::string_view(endless).substr(offset, 1));
            }
            ++offset;
            next_byte += 100ms;
        }
        std::vector<pollfd> fds;
        std::vector<std::size_t> which;
        for (std::size_t i = 0; i < slow.size(); ++i) {
            if (!slow[i].closed()) {
                fds.push_back(pollfd{slow[i].fd(), POLLIN, 0});
                which.push_back(i);
            }
        }
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_byte - Clock::now());
        ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(wait.count(), 0, 100)));
        for (std::size_t k = 0; k < fds.size(); ++k) {
            if (fds[k].revents != 0 && slow[which[k]].closed_within(0ms)) {
                out.closed_after[which[k]] = Clock::now() - started;
                --out.open;
            }
        }
    }
    return out;
}

TEST(Slowloris, SlowConnectionsAreClosedAfterTheRequestTimeoutWhileOthersAreServedPromptly) {
    Ratelimitd server(config, "", {"--request-timeout", "1s"});

    // Before the connects: no connection's timeout can have started earlier.
    const auto started = Clock::now();
    std::vector<RawConnection> slow;
    for (int i = 0; i < trickling + silent; ++i) slow.emplace_back(server.port());

    // A normal client keeps checking while the slow connections are held.
    std::atomic<bool> stop{false};
    std::vector<std::chrono::microseconds> latencies;
    int failures = 0;
    std::thread normal([&] {
        HttpClient client(server.port());
        while (!stop) {
            const auto t0 = Clock::now();
            const auto res = client.post("/v1/check", R"({"policy":"demo","tenant":"normal"})");
            latencies.push_back(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0));
            if (res.status != 200) ++failures;
            std::this_thread::sleep_for(5ms);  // a steady client, not a flood
        }
    });

    const Closes closes = trickle_until_closed(slow, started);
    const auto& closed_after = closes.closed_after;
    const std::size_t open = closes.open;
    stop = true;
    normal.join();

    EXPECT_EQ(open, 0u) << "slow connections still open " << std::chrono::duration_cast<std::chrono::milliseconds>(
                                                                     Clock::now() - started)
                                                                     .count()
                        << " ms after they started";
    // Closed by the timeout, not refused: none before most of the timeout had passed.
    const auto first_close = *std::min_element(closed_after.begin(), closed_after.end());
    EXPECT_GE(first_close, request_timeout - 200ms);

    ASSERT_GT(latencies.size(), 20u);
    std::sort(latencies.begin(), latencies.end());
    const auto p99 = latencies[latencies.size() * 99 / 100];
    const auto max = latencies.back();
    std::printf("slowloris: %d trickling + %d silent connections closed after %lld..%lld ms; normal client: "
                "%zu checks, p99 %.1f ms, max %.1f ms\n",
                trickling, silent,
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(first_close).count()),
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           *std::max_element(closed_after.begin(), closed_after.end()))
                                           .count()),
                latencies.size(), p99.count() / 1000.0, max.count() / 1000.0);
    EXPECT_EQ(failures, 0);
    EXPECT_LT(max, 500ms) << "a normal check waited behind the slow connections";
}

}  // namespace
}  // namespace ratelimitd::test::slowloris_test
