// What ERL mode's stats add to a ShouldRateLimit call, in ns: policy::plan of a one-descriptor
// call (the work every call does before the store) against ErlStats::count_call of the same
// plan and a decided window, for a rule's own path (its counters found on the rule) and for a
// detailed_metric rule (its name looked up by the values sent, under a mutex). Four threads
// count at once in the second round, on one rule, as lanes do under load.
//   cmake -DRATELIMITD_BENCH=ON ... && cmake --build build --target erl_stats_bench
//   build/erl_stats_bench
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/rls_plan.hpp"
#include "ratelimitd/stats/erl_stats.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

using namespace ratelimitd;
using Clock = std::chrono::steady_clock;

namespace {

const char* const bench_config = R"(
domains:
  - domain: edge
    descriptors:
      - key: user
        rate_limit: {unit: hour, requests_per_unit: 1000000}
      - key: remote_address
        detailed_metric: true
        rate_limit: {unit: hour, requests_per_unit: 1000000}
)";

template <class F>
double ns_per(int n, F&& f) {
    const auto start = Clock::now();
    for (int i = 0; i < n; ++i) f(i);
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / n;
}

}  // namespace

int main() {
    auto cfg = policy::parse_config(bench_config, "bench.yaml");
    const auto registry = std::make_shared<const policy::Registry>(std::move(cfg.registry));
    policy::EnvoyKeys keys;
    keys.erl = true;
    stats::ErlStats counted;
    constexpr int n = 1'000'000;
    for (const char* key : {"user", "remote_address"}) {
        const policy::RlsRequest req{"edge", {{{{key, "10.0.0.1"}}, std::nullopt, std::nullopt}}, 0};
        auto plan = policy::plan(registry, req, keys);
        if (!plan) return 1;
        service::Decision decision;
        decision.verdict.allowed = true;
        check::WindowState w;
        w.allowed = true;
        w.remaining = 500'000;
        decision.verdict.windows.push_back(w);
        decision.owner.push_back(0);
        const double planning = ns_per(n / 10, [&](int) { (void)policy::plan(registry, req, keys); });
        const double counting = ns_per(n, [&](int) { counted.count_call(req, *plan, &decision, false); });
        std::vector<std::thread> threads;
        const auto start = Clock::now();
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&] {
                for (int i = 0; i < n; ++i) counted.count_call(req, *plan, &decision, false);
            });
        }
        for (auto& t : threads) t.join();
        const double parallel = std::chrono::duration<double, std::nano>(Clock::now() - start).count() / n;
        std::printf("%-15s plan %7.1f ns  count_call %6.1f ns  (4 threads at once: %6.1f ns per call each)\n", key,
                    planning, counting, parallel);
    }
    return 0;
}
