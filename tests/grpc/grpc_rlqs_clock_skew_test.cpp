// RLQS shares with replicas whose clocks disagree (docs/rlqs.md, "Windows on Redis's clock"):
// two ratelimitd replicas on one real redis-server, one of them started under libfaketime
// 31.3 s ahead (its windows of 2 s would start 1.3 s off the other's if it used its own
// clock), three filter-shaped clients across both. The ledger's windows are Redis TIME's, so
// the fleet stays within the stated bound in every whole window of the real clock.
#include "support/processes.hpp"
#include "support/quota_filter.hpp"
#include "support/quota_windows.hpp"
#include "support/rls_client.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::test::grpc_rlqs_clock_skew_test {
namespace {

constexpr std::int64_t limit = 100;
constexpr std::int64_t window_ms = 2'000;
constexpr std::int64_t skew_ms = 31'300;

const std::string config = R"(rlqs:
  web:
    shared:
      match: {kind: api}
      limit: 100
      window: 2s
      reporting_interval: 200ms
      assignment_ttl: 600ms
      idle_after: 60s
)";

/// libfaketime's multithreaded library (Debian's faketime package), or "" when not installed.
std::string faketime_library() {
    for (const char* dir : {"/usr/lib/x86_64-linux-gnu/faketime", "/usr/lib/aarch64-linux-gnu/faketime",
                            "/usr/lib/faketime", "/usr/local/lib/faketime"}) {
        const std::string path = std::string(dir) + "/libfaketimeMT.so.1";
        if (std::filesystem::exists(path)) return path;
    }
    return "";
}

/// The time of day (ms) a log line was stamped with: "2026-12-07T09:48:53.268+00:00 ...".
std::int64_t stamped_ms_of_day(const std::string& line) {
    const auto t = line.find('T');
    if (t == std::string::npos || line.size() < t + 13) return -1;
    const auto part = [&](std::size_t at, std::size_t n) { return std::stoll(line.substr(t + at, n)); };
    return ((part(1, 2) * 60 + part(4, 2)) * 60 + part(7, 2)) * 1000 + part(10, 3);
}

TEST(RlqsClockSkew, AReplicaWithItsClockAheadKeepsTheFleetWithinTheBound) {
    const std::string faketime = faketime_library();
    if (faketime.empty()) GTEST_SKIP() << "libfaketime is not installed (scripts/install-deps.sh all)";
    RedisServer redis;
    const std::vector<std::string> grpc{"--grpc-listen", "127.0.0.1:0"};
    Ratelimitd on_time(config, redis.url(), grpc);
    const std::int64_t before = now_ms();
    // ASan wants to be first in the library list: told not to mind libfaketime before it.
    Ratelimitd ahead(config, redis.url(), grpc,
                     {"LD_PRELOAD=" + faketime, "FAKETIME=+31.3s", "ASAN_OPTIONS=verify_asan_link_order=0"});
    const std::string ahead_line = ahead.process().wait_for_log("grpc listening on", process_start_bound);
    const std::vector<unsigned short> ports{
        grpc_port_from_log(on_time.process().wait_for_log("grpc listening on", process_start_bound)),
        grpc_port_from_log(ahead_line)};
    // The shifted replica's clock really is ahead: its log is stamped about 31.3 s later.
    constexpr std::int64_t day_ms = 86'400'000;
    const std::int64_t ahead_by = (stamped_ms_of_day(ahead_line) - before % day_ms + day_ms) % day_ms;
    std::printf("the shifted replica's clock: %lld ms ahead\n", static_cast<long long>(ahead_by));
    EXPECT_GE(ahead_by, skew_ms - 1'000);
    EXPECT_LE(ahead_by, skew_ms + 10'000);

    std::vector<std::unique_ptr<QuotaFilter>> clients;
    std::vector<const QuotaFilter*> all;
    const std::vector<double> demand{60, 30, 10};
    for (std::size_t i = 0; i < demand.size(); ++i) {
        clients.push_back(std::make_unique<QuotaFilter>(QuotaFilterSettings{.domain = "web",
                                                                            .bucket = {{"kind", "api"}},
                                                                            .requests_per_second = demand[i],
                                                                            .replicas = ports,
                                                                            .first_replica = i % 2}));
        all.push_back(clients.back().get());
    }
    const std::int64_t started = now_ms();
    run_windows(3, window_ms);
    const auto windows = windows_of(all, started, now_ms(), window_ms);
    ASSERT_GE(windows.size(), 3U);
    expect_within_bound(windows, "one replica 31.3 s ahead", limit);
    for (const auto& [k, w] : windows) EXPECT_GE(w.admitted, limit / 2) << "window " << k;
    for (auto& c : clients) {
        c->leave();
        EXPECT_FALSE(c->saw_stream_error());
    }
}

}  // namespace
}  // namespace ratelimitd::test::grpc_rlqs_clock_skew_test
