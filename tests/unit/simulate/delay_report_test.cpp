// simulate's delays (issue 50): a max_delay policy's delayed requests and their p50/p99/max, in
// text, JSON and HTML; none of it when no policy delayed.
#include "ratelimitd/simulate/delay_distribution.hpp"
#include "ratelimitd/simulate/report.hpp"
#include "ratelimitd/simulate/tally.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::simulate {
namespace {

TEST(DelayDistribution, PercentilesAreTheCountedDelays) {
    DelayDistribution d;
    EXPECT_EQ(d.percentile(0.5), 0);
    for (std::int64_t ms = 100; ms <= 10'000; ms += 100) d.add(ms);  // 100 delays, 100 ms apart
    EXPECT_EQ(d.count(), 100u);
    // Below 1 s to the ms; above, the whole second rounded up.
    EXPECT_EQ(d.percentile(0.05), 500);
    EXPECT_EQ(d.percentile(0.5), 5'000);
    EXPECT_EQ(d.percentile(0.99), 10'000);
    EXPECT_EQ(d.max(), 10'000);
    d.add(1'234);
    EXPECT_EQ(d.max(), 10'000);
    EXPECT_EQ(d.percentile(1.0), 10'000);
}

Report delayed_report() {
    Tally t({"smooth", "plain"});
    t.request(1'764'590'400'000);
    t.checked(0, "ip:192.0.2.1", false, 1'764'590'400'000);
    for (std::int64_t ms : {100, 200, 300, 400}) t.delayed(0, ms);
    Report r;
    r.config = t.summary();
    return r;
}

TEST(DelayReport, EveryFormatShowsTheDelayedAndTheirDistribution) {
    const Report r = delayed_report();
    const auto& smooth = r.config.policies.at("smooth");
    EXPECT_EQ(smooth.delayed, 4u);
    EXPECT_EQ(smooth.delay_p50_ms, 200);
    EXPECT_EQ(smooth.delay_p99_ms, 400);
    EXPECT_EQ(smooth.delay_max_ms, 400);
    const auto j = to_json(r);
    EXPECT_EQ(j["policies"]["smooth"]["delayed"], 4);
    EXPECT_EQ(j["policies"]["smooth"]["delay_ms"].dump(), R"({"p50":200,"p99":400,"max":400})");
    EXPECT_FALSE(j["policies"]["plain"].contains("delayed")) << "a policy that never delayed says nothing";
    const std::string text = to_text(r);
    EXPECT_NE(text.find("delayed"), std::string::npos) << text;
    EXPECT_NE(text.find("smooth                              4          200          400          400"),
              std::string::npos)
        << text;
    const std::string html = to_html(r);
    EXPECT_NE(html.find("-delays\""), std::string::npos);
    EXPECT_NE(html.find("<td>smooth</td><td class=\"n\">4</td><td class=\"n\">200</td>"), std::string::npos);
}

TEST(DelayReport, NoDelaysNoDelayTable) {
    Tally t({"plain"});
    t.request(0);
    t.checked(0, "a", true, 0);
    Report r;
    r.config = t.summary();
    EXPECT_EQ(to_text(r).find("delayed"), std::string::npos);
    EXPECT_EQ(to_html(r).find("-delays\""), std::string::npos);
}

}  // namespace
}  // namespace ratelimitd::simulate
