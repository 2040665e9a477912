// store_bench: drives the Redis store directly, without HTTP, to measure what one Redis
// decides per second through ratelimitd's store layer (coalescing on or off), against
// redis-benchmark's per-check EVALSHA on the same server. On a 2-core machine the HTTP side
// saturates long before Redis does, so only this shows what coalescing does for Redis.
// A redis-cluster:// URL drives the cluster store instead (one pool per primary).
//   store_bench REDIS_URL [--seconds N] [--threads N] [--concurrency N] [--coalescing on|off]
//               [--tenants N]
// Prints one line: checks=N seconds=S rate=R calls=C (script calls sent) p50_us=.. p99_us=..
// (the latency of one check through the store, queueing included, sampled 1 in 16).
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/cluster/cluster_store.hpp"
#include "ratelimitd/store/redis/redis_store.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace net = boost::asio;
using namespace ratelimitd;
using namespace std::chrono_literals;

namespace {

struct Options {
    std::string url;
    int seconds = 5;
    int threads = 2;
    int concurrency = 64;  // checks outstanding per thread
    bool coalescing = true;
    int tenants = 10000;
};

Options parse(int argc, char** argv) {
    Options o;
    if (argc < 2) {
        std::fprintf(stderr, "usage: store_bench REDIS_URL [--seconds N] [--threads N] [--concurrency N] "
                             "[--coalescing on|off] [--tenants N]\n");
        std::exit(2);
    }
    o.url = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        const char* v = argv[i + 1];
        if (flag == "--seconds") o.seconds = std::atoi(v);
        else if (flag == "--threads") o.threads = std::atoi(v);
        else if (flag == "--concurrency") o.concurrency = std::atoi(v);
        else if (flag == "--coalescing") o.coalescing = std::strcmp(v, "on") == 0;
        else if (flag == "--tenants") o.tenants = std::atoi(v);
        else {
            std::fprintf(stderr, "store_bench: unknown flag %s\n", flag.c_str());
            std::exit(2);
        }
    }
    return o;
}

/// One server thread's worth of load: its own io_context and RedisStore, `concurrency`
/// coroutines each checking random tenants back to back until the end time.
struct Samples {
    std::mutex mu;
    std::vector<std::int64_t> us;
};

void run_thread(const Options& o, int index, std::chrono::steady_clock::time_point start,
                std::chrono::steady_clock::time_point end, std::atomic<std::uint64_t>& checks,
                std::atomic<std::uint64_t>& calls, Samples& samples) {
    net::io_context ioc(1);
    const store::redis::Coalescing coalescing{.enabled = o.coalescing};
    const std::string instance = "bench." + std::to_string(index);
    std::unique_ptr<store::redis::RedisStore> single;
    std::unique_ptr<store::redis::cluster::ClusterStore> cluster;
    if (store::redis::cluster::is_cluster_url(o.url)) {
        cluster = std::make_unique<store::redis::cluster::ClusterStore>(
            ioc.get_executor(), *store::redis::cluster::parse_cluster_url(o.url), 1s, instance, 2, coalescing);
    } else {
        single = std::make_unique<store::redis::RedisStore>(
            ioc.get_executor(), *store::redis::parse_redis_url(o.url), 1s, instance, 2, coalescing);
    }
    store::Store& redis = single ? static_cast<store::Store&>(*single) : *cluster;
    auto ready = [&] { return single ? single->any_ready() : cluster->any_ready(); };
    std::vector<std::int64_t> mine;
    policy::Policy p;
    p.name = "bench";
    p.algorithm = policy::Algorithm::token_bucket;
    p.limit = 100;
    p.window = 60s;
    p.burst = 100;

    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (!ready()) {
        if (std::chrono::steady_clock::now() > give_up) {
            std::fprintf(stderr, "store_bench: %s is not ready after 10 s\n", o.url.c_str());
            std::exit(1);
        }
        ioc.run_one_for(10ms);
    }
    std::this_thread::sleep_until(start);  // every thread starts together
    std::uint64_t done = 0;
    int running = o.concurrency;
    for (int c = 0; c < o.concurrency; ++c) {
        net::co_spawn(
            ioc,
            [&, c]() -> net::awaitable<void> {
                std::minstd_rand rng(static_cast<unsigned>(index * 1000 + c));
                std::uniform_int_distribution<int> tenant(0, o.tenants - 1);
                while (true) {
                    const auto t0 = std::chrono::steady_clock::now();
                    if (t0 >= end) break;
                    auto v = co_await redis.apply(p, policy::make_key("rl", "bench", "t" + std::to_string(tenant(rng)),
                                                                     "global"), 1);
                    if (!v) std::fprintf(stderr, "store_bench: %s\n", v.error().detail.c_str());
                    if ((++done & 15) == 0) {
                        mine.push_back(std::chrono::duration_cast<std::chrono::microseconds>(
                                           std::chrono::steady_clock::now() - t0).count());
                    }
                }
                --running;
            },
            net::detached);
    }
    while (running > 0) ioc.run_one_for(100ms);
    checks += done;
    calls += !o.coalescing ? done : single ? single->batches_sent() : cluster->batches_sent();
    if (single) single->stop();
    else cluster->stop();
    ioc.poll();
    std::lock_guard lock(samples.mu);
    samples.us.insert(samples.us.end(), mine.begin(), mine.end());
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    spdlog::set_level(spdlog::level::warn);
    const auto valid = store::redis::cluster::is_cluster_url(o.url)
                           ? store::redis::cluster::parse_cluster_url(o.url).has_value()
                           : store::redis::parse_redis_url(o.url).has_value();
    if (!valid) {
        std::fprintf(stderr, "store_bench: not a redis:// or redis-cluster:// URL\n");
        return 2;
    }
    Samples samples;
    std::atomic<std::uint64_t> checks{0}, calls{0};
    const auto start = std::chrono::steady_clock::now() + 500ms;
    const auto end = start + std::chrono::seconds(o.seconds);
    std::vector<std::thread> threads;
    for (int t = 0; t < o.threads; ++t) {
        threads.emplace_back(run_thread, std::cref(o), t, start, end, std::ref(checks), std::ref(calls),
                             std::ref(samples));
    }
    for (auto& t : threads) t.join();
    auto& us = samples.us;
    std::sort(us.begin(), us.end());
    auto pct = [&](double q) { return us.empty() ? 0 : us[static_cast<std::size_t>(q * static_cast<double>(us.size() - 1))]; };
    std::printf("checks=%llu seconds=%d rate=%.0f calls=%llu p50_us=%lld p99_us=%lld\n",
                static_cast<unsigned long long>(checks.load()), o.seconds,
                static_cast<double>(checks.load()) / o.seconds, static_cast<unsigned long long>(calls.load()),
                static_cast<long long>(pct(0.5)), static_cast<long long>(pct(0.99)));
    return 0;
}
