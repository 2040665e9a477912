// What tracing costs a check (issue 53): user-space instructions per POST /v1/check of the real
// binary under callgrind, every thread counted (the spans' encoding, on the check's thread, and
// the export thread's sending too), with tracing off, on at 1 % and on at 100 % (new roots: no
// traceparent). A bench, not a test:
// it prints its figures for bench/RESULTS.md. Run: cmake --build build --target trace_cost_bench
// && build/trace_cost_bench (needs valgrind).
#include "perf/callgrind_server.hpp"
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/otlp_receiver.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace ratelimitd::test::perf {
namespace {

constexpr int warm_up = 200;
constexpr int measured = 2000;

std::string config_for(const std::string& tracing) {
    return "policies:\n  roomy: { algorithm: token_bucket, limit: 1000000, window: 24h }\n" + tracing;
}

struct Cost {
    double instructions_per_check = 0;
    std::size_t spans = 0;    ///< exported for the measured checks
    std::int64_t dropped = 0;  ///< at a full queue, over the whole run (warm-up included)
};

// Waits until no span has arrived for three export periods: every span made so far is in.
void settle(const OtlpReceiver& receiver) {
    std::size_t seen = receiver.spans().size();
    while (wait_until([&] { return receiver.spans().size() != seen; }, std::chrono::seconds(3))) {
        seen = receiver.spans().size();
    }
}

// With `receiver`, the warm-up's spans are in before counting starts and the measured checks'
// spans are in before it ends: the export is part of what a traced check costs.
Cost cost_of(const std::string& config, const OtlpReceiver* receiver) {
    CallgrindServer server(config);
    HttpClient client(server.port());
    const auto check = [&](int i) {
        return client.post("/v1/check", R"({"policy":"roomy","tenant":"t)" + std::to_string(i % 8) + R"("})",
                           {{"Content-Type", "application/json"}})
            .status;
    };
    for (int i = 0; i < warm_up; ++i) check(i);
    if (receiver != nullptr) settle(*receiver);
    const std::size_t before = receiver != nullptr ? receiver->spans().size() : 0;
    server.zero();
    int ok = 0;
    for (int i = 0; i < measured; ++i) ok += check(i) == 200 ? 1 : 0;
    EXPECT_EQ(ok, measured);
    if (receiver != nullptr) settle(*receiver);
    const auto counts = server.dump();
    // Read after the dump: the /metrics request is not counted.
    const std::int64_t dropped =
        receiver != nullptr
            ? static_cast<std::int64_t>(sample(client.get("/metrics").body, "ratelimitd_trace_spans_dropped_total"))
            : 0;
    return {static_cast<double>(counts.instructions) / measured,
            receiver != nullptr ? receiver->spans().size() - before : 0, dropped};
}

TEST(TraceCost, InstructionsPerCheckOffAtOnePercentAndAtAll) {
    if (!CallgrindServer::available()) GTEST_SKIP() << "valgrind is not installed";
    const Cost off = cost_of(config_for(""), nullptr);
    // A collector keeps connections open (the OpenTelemetry Collector's OTLP/HTTP receiver does):
    // so does this one, as the exporter keeps its one connection.
    OtlpReceiver one;
    one.http().keep_alive(true);
    const Cost at_one = cost_of(config_for("trace_endpoint: " + one.endpoint() + "\ntrace_sampler_arg: 0.01\n"), &one);
    OtlpReceiver all;
    all.http().keep_alive(true);
    const Cost at_all = cost_of(config_for("trace_endpoint: " + all.endpoint() + "\n"), &all);
    std::printf("tracing off: %.0f instructions per check\n", off.instructions_per_check);
    for (const auto& [name, c] : {std::pair{"1 %", at_one}, std::pair{"100 %", at_all}}) {
        std::printf("tracing %s: %.0f instructions per check (%+.1f %%), %zu spans exported for %d checks, %lld "
                    "dropped at the full queue\n",
                    name, c.instructions_per_check, 100 * (c.instructions_per_check / off.instructions_per_check - 1),
                    c.spans, measured, static_cast<long long>(c.dropped));
    }
    // Two spans a check, the door's server span and its store call's: each exported, or dropped
    // (and counted) when the export thread, slowed down by callgrind like the rest, let the
    // queue fill. None dropped in the warm-up: its spans were in before counting started.
    EXPECT_EQ(at_all.spans + static_cast<std::size_t>(at_all.dropped), static_cast<std::size_t>(2 * measured));
}

}  // namespace
}  // namespace ratelimitd::test::perf
