// Keyspace flood: a client rotating distinct tenants. On Redis every key it creates has a TTL
// no longer than its window, and the memory it costs is measured; the embedded store stays
// within memory_max_keys and counts what it evicts. Prints the figures (README, SECURITY.md);
// asserts no timing. A Debug build on 2 cores checks about 4000 tenants/s against Redis, so
// the Redis run floods 40k tenants by default (bytes per key do not depend on the count);
// RATELIMITD_FLOOD_TENANTS=100000 runs the full size.
#include "support/processes.hpp"
#include "support/raw_connection.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>
#include <vector>

namespace ratelimitd::test::keyspace_flood_test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr long long window_ms = 60'000;

// RATELIMITD_FLOOD_TENANTS, else `fallback`.
int flood_size(int fallback) {
    const char* v = std::getenv("RATELIMITD_FLOOD_TENANTS");
    return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

const char* const config = R"(
policies:
  flood_fw: { algorithm: fixed_window, limit: 10, window: 60s }
  # limit 1: one admission empties the bucket, so its key lives the whole 60 s (limit 10 gave
  # 6 s, shorter than a slow flood: keys written first had expired before they were counted)
  flood_tb: { algorithm: token_bucket, limit: 1, window: 60s }
  flood_sl: { algorithm: sliding_log, limit: 10, window: 60s }
)";

// The flood needs many requests per connection; the per-connection cap has its own test.
// A long store timeout: these tests count keys and admissions, and a check that timed out
// under a slow (sanitizer) build would be a degraded 200 that counts as admitted.
const std::vector<std::string> flood_flags{"--max-requests-per-connection", "1000000000", "--store-timeout", "5s"};

struct FloodResult {
    int allowed = 0;
    int other = 0;
    double seconds = 0;
};

// Sends request(0)..request(count-1), pipelined `batch` per send over `connections`
// keep-alive connections in parallel; counts the 200s.
FloodResult flood(unsigned short port, int count, const std::function<std::string(int)>& request,
                  int connections = 4, int batch = 100) {
    std::atomic<int> next{0}, allowed{0}, other{0};
    const auto t0 = Clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < connections; ++c) {
        threads.emplace_back([&] {
            RawConnection conn(port);
            for (;;) {
                const int first = next.fetch_add(batch);
                if (first >= count) return;
                const int last = std::min(count, first + batch);
                std::string requests;
                for (int i = first; i < last; ++i) requests += request(i);
                if (!conn.send(requests)) {
                    other += last - first;
                    return;
                }
                for (int i = first; i < last; ++i) {
                    (conn.read_response(30s).status == 200 ? allowed : other)++;
                }
            }
        });
    }
    for (auto& t : threads) t.join();
    return {allowed.load(), other.load(), std::chrono::duration<double>(Clock::now() - t0).count()};
}

// Checks `policy` once for each tenant "t0".."t{count-1}".
FloodResult flood_tenants(unsigned short port, const std::string& policy, int count) {
    return flood(port, count, [&policy](int i) {
        return "GET /v1/check?policy=" + policy + "&tenant=t" + std::to_string(i) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    });
}

long long used_memory(const RedisServer& redis) {
    std::istringstream info(redis.command({"INFO", "memory"}));
    for (std::string line; std::getline(info, line);) {
        if (line.rfind("used_memory:", 0) == 0) return std::stoll(line.substr(12));
    }
    return -1;
}

// Resident memory of a process in bytes, from /proc (Linux).
long long rss_bytes(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);) {
        if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
    }
    return -1;
}

double sample(const std::string& exposition, const std::string& series) {
    std::istringstream lines(exposition);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
    }
    return -1;
}

std::string metrics(unsigned short port) {
    RawConnection c(port);
    c.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    return c.read_response(10s).body;
}

TEST(KeyspaceFlood, OnRedisEveryKeyHasAShortTtlAndItsMemoryIsMeasured) {
    RedisServer redis;
    Ratelimitd server(config, redis.url(), flood_flags);

    struct Run {
        const char* policy;
        int count;
    };
    // The fixed window at full size; the other algorithms' keys at a quarter, for their size.
    const int tenants = flood_size(40'000);
    for (const Run run : {Run{"flood_fw", tenants}, Run{"flood_tb", tenants / 4}, Run{"flood_sl", tenants / 4}}) {
        redis.command({"FLUSHALL"});
        const long long before = used_memory(redis);
        const FloodResult r = flood_tenants(server.port(), run.policy, run.count);
        ASSERT_EQ(r.allowed, run.count) << run.policy << ": every new tenant is admitted once";
        const long long keys = redis.integer({"DBSIZE"});
        EXPECT_EQ(keys, run.count) << run.policy << ": one key per tenant";
        const long long delta = used_memory(redis) - before;

        // Every key has a TTL, none longer than the window: {keys without TTL, largest PTTL}.
        const std::string ttl = redis.command(
            {"EVAL",
             "local none, longest = 0, 0 "
             "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
             "  local t = redis.call('PTTL', k) "
             "  if t < 0 then none = none + 1 elseif t > longest then longest = t end "
             "end return {none, longest}",
             "0", std::string("rl:") + run.policy + ":*"});
        std::istringstream parts(ttl);
        long long without_ttl = -1, longest = -1;
        parts >> without_ttl >> longest;
        EXPECT_EQ(without_ttl, 0) << run.policy << ": " << ttl;
        EXPECT_GT(longest, 0) << ttl;
        EXPECT_LE(longest, window_ms) << run.policy << ": " << ttl;
        // And a random sample, read one by one as an operator would.
        for (int i = 0; i < 200; ++i) {
            const std::string key = redis.command({"RANDOMKEY"});
            const long long pttl = redis.integer({"PTTL", key});
            EXPECT_GT(pttl, 0) << key;
            EXPECT_LE(pttl, window_ms) << key;
        }

        std::printf("keyspace flood on Redis, %s: %d tenants in %.1f s (%.0f checks/s), %lld keys, "
                    "used_memory +%lld bytes = %.0f bytes per key, longest TTL %lld ms\n",
                    run.policy, run.count, r.seconds, run.count / r.seconds, keys, delta,
                    static_cast<double>(delta) / static_cast<double>(keys), longest);
    }
}

TEST(KeyspaceFlood, TheEmbeddedStoreStaysWithinMemoryMaxKeysAndCountsEvictions) {
    constexpr int cap = 10'000;
    const int tenants = flood_size(100'000);
    std::vector<std::string> flags = flood_flags;
    flags.push_back("--memory-max-keys");
    flags.push_back(std::to_string(cap));
    Ratelimitd server(config, "", flags);
    const long long rss_before = rss_bytes(server.process().pid());

    const FloodResult r = flood_tenants(server.port(), "flood_fw", tenants);
    ASSERT_EQ(r.allowed, tenants) << "an evicted tenant is only forgotten, never denied";
    const std::string m = metrics(server.port());
    const double keys = sample(m, "ratelimitd_memory_store_keys");
    const double evictions = sample(m, "ratelimitd_memory_store_evictions_total");
    EXPECT_GT(keys, 0) << m;
    EXPECT_LE(keys, cap) << m;
    // Nothing expired within the 60 s window: every key not held was evicted, and counted.
    EXPECT_EQ(keys + evictions, tenants) << m;
    const long long rss_after = rss_bytes(server.process().pid());

    std::printf("keyspace flood on the embedded store: %d tenants in %.1f s (%.0f checks/s), memory_max_keys %d: "
                "%.0f keys held, %.0f evictions, RSS %lld -> %lld KiB\n",
                tenants, r.seconds, tenants / r.seconds, cap, keys, evictions, rss_before / 1024, rss_after / 1024);
}

TEST(KeyspaceFlood, APerIpLayerBoundsTheKeysARotatingClientCreates) {
    // One address rotating API keys through /v1/auth on a layered route: once the per-IP
    // limit denies, the layered check writes nothing, so no further per-key key is created.
    RedisServer redis;
    Ratelimitd server(R"(
hash_secret: "keyspace-flood-secret-0123456789"
policies:
  per-key: { algorithm: fixed_window, limit: 10, window: 60s }
  per-ip: { algorithm: fixed_window, limit: 50, window: 60s }
identity:
  - { name: api_key, header: X-Api-Key, hash: true }
routes:
  - path: "/api/*"
    limits: [ { policy: per-key, identity: api_key }, { policy: per-ip, identity: client_ip } ]
)",
                      redis.url(), flood_flags);
    constexpr int requests = 5'000;
    const FloodResult r = flood(server.port(), requests, [](int i) {
        return "GET /v1/auth HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Original-URI: /api/x\r\nX-Api-Key: rotating-" +
               std::to_string(i) + "\r\n\r\n";
    });
    EXPECT_EQ(r.allowed, 50);
    EXPECT_EQ(r.other, requests - 50);
    // 50 per-key keys and the one per-IP key, whatever the number of keys tried.
    EXPECT_EQ(redis.integer({"DBSIZE"}), 51);
    std::printf("keyspace flood behind a per-IP limit of 50/min: %d rotating API keys from one address -> %lld keys\n",
                requests, redis.integer({"DBSIZE"}));
}

}  // namespace
}  // namespace ratelimitd::test::keyspace_flood_test
