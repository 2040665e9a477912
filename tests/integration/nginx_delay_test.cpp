// A real nginx with auth_request (the shipped config/nginx/ratelimitd.conf) in front of
// ratelimitd holding delayed subrequests (issue 50): the smoothing of limit_req without
// nodelay, measured with the clients' own timestamps. Delays stay under the shipped
// proxy_read_timeout (1 s): rate 10/s, burst 1, max_delay 900ms is nginx's `burst=9`.
#include "support/concurrent_calls.hpp"
#include "support/http_client.hpp"
#include "support/nginx.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace ratelimitd::test::nginx_delay_test {
namespace {

const std::string config = R"(
policies:
  smooth: { algorithm: gcra, limit: 10, window: 1s, burst: 1, max_delay: 900ms }
identity:
  - { client_ip: true }
trusted_proxies: ["127.0.0.2/32"]
routes:
  - { path: "/api/*", policy: smooth }
)";

TEST(NginxDelay, HeldSubrequestsReachTheApiAtTheRate) {
    Ratelimitd ratelimitd(config, "", {"--watch-config", "off"});
    Nginx nginx({ratelimitd.port(), "closed", "127.0.0.2"});
    using clock = std::chrono::steady_clock;
    std::mutex mu;
    std::vector<std::int64_t> admitted_after_ms;  // since the first request was sent
    int denied = 0;
    int other = 0;
    const auto start = clock::now();
    run_concurrently(20, [&](int) {
        HttpClient client(nginx.port());
        const int status = client.get("/api/x").status;
        const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start).count();
        std::lock_guard lock(mu);
        if (status == 200) {
            admitted_after_ms.push_back(after);
        } else if (status == 429) {
            ++denied;
        } else {
            ++other;
        }
    });
    EXPECT_EQ(other, 0);
    // 1 at once and 9 held (100 ms .. 900 ms), one more per 100 ms the 20 requests took to
    // arrive; every admitted request reached the API.
    ASSERT_GE(admitted_after_ms.size(), 10u);
    EXPECT_EQ(denied, 20 - static_cast<int>(admitted_after_ms.size()));
    EXPECT_EQ(nginx.upstream_requests(), static_cast<int>(admitted_after_ms.size()));
    // The k-th admitted answer cannot come sooner than k emission intervals after the first
    // request was sent: the reservations are due 100 ms apart and each answer is held until due.
    std::sort(admitted_after_ms.begin(), admitted_after_ms.end());
    for (std::size_t k = 1; k < admitted_after_ms.size(); ++k) {
        EXPECT_GE(admitted_after_ms[k], static_cast<std::int64_t>(k) * 100 - 1) << "admitted answer " << k;
    }
}

}  // namespace
}  // namespace ratelimitd::test::nginx_delay_test
