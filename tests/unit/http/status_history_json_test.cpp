// GET /v1/status/history's JSON: counts per sample, null latencies when the store was not
// asked, and a size bounded by the ring whatever the number of policies.
#include "ratelimitd/http/status_history_endpoint.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ratelimitd::http {
namespace {

TEST(StatusHistoryJson, ASampleCarriesItsCountsByVerdictPolicyAndPart) {
    service::StatusSample s;
    s.at_ms = 1'796'126'405'000;
    s.span_ms = 5'000;
    s.checks = {60, 3, 1, 0, 0};
    s.denied[0] = {"login", 3};
    s.denied_other = 2;
    s.store_calls = 64;
    s.store_p50_ms = 0.5;
    s.store_p99_ms = 2.5;
    s.webhooks_sent = 4;
    s.held = 7;
    service::StatusSample quiet;
    quiet.at_ms = s.at_ms + 5'000;
    quiet.span_ms = 5'000;
    const auto j = nlohmann::json::parse(status_history_json({s, quiet}));
    EXPECT_EQ(j["interval_seconds"], 5.0);
    EXPECT_EQ(j["capacity"], 180);
    EXPECT_EQ(j["verdicts"].dump(), R"(["allowed","denied","shadow_denied","degraded_allowed","failed_closed"])");
    ASSERT_EQ(j["samples"].size(), 2u);
    const auto& first = j["samples"][0];
    EXPECT_EQ(first["at"], 1'796'126'405'000);
    EXPECT_EQ(first["seconds"], 5.0);
    EXPECT_EQ(first["checks"]["allowed"], 60);
    EXPECT_EQ(first["checks"]["shadow_denied"], 1);
    EXPECT_EQ(first["denied"].dump(), R"j({"(other)":2,"login":3})j");
    EXPECT_EQ(first["store"].dump(), R"({"calls":64,"errors":0,"p50_ms":0.5,"p99_ms":2.5})");
    EXPECT_EQ(first["webhooks"].dump(), R"({"dropped":0,"sent":4})");
    EXPECT_EQ(first["held"], 7);
    EXPECT_TRUE(j["samples"][1]["store"]["p50_ms"].is_null());
    EXPECT_EQ(j["samples"][1]["denied"].dump(), "{}");
}

TEST(StatusHistoryJson, AFullRingOfBusyPoliciesStaysSmall) {
    service::StatusHistory h;
    service::StatusInputs in;
    for (std::int64_t i = 0; i <= 400; ++i) {
        for (int p = 0; p < 50; ++p) in.metrics.denied[std::string(64, static_cast<char>('a' + p % 26)) +
                                                       std::to_string(p)] += static_cast<std::uint64_t>(p + i);
        h.record(i * 5'000, in);
    }
    const std::string body = status_history_json(h.samples());
    const auto j = nlohmann::json::parse(body);
    EXPECT_EQ(j["samples"].size(), 180u);
    EXPECT_EQ(j["samples"][0]["denied"].size(), 6u);  // five policies and (other)
    EXPECT_LT(body.size(), 180u * 800u) << "about 800 bytes a sample at most with 64-byte policy names";
}

}  // namespace
}  // namespace ratelimitd::http
