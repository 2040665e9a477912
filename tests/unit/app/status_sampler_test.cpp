// The status sampler's count of the quota webhooks' deliveries: the notifier's own total
// (NotifyMetrics::sent, summed over targets as each is counted), not a parse of its text.
#include "ratelimitd/notify/notifier.hpp"
#include "ratelimitd/notify/notify_metrics.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::app {
namespace {

TEST(StatusSampler, WebhookDeliveriesAreSummedOverTargets) {
    notify::NotifyMetrics m;
    EXPECT_EQ(m.sent(), 0u);
    for (int i = 0; i < 3; ++i) m.count_sent("ops");
    m.count_sent("billing");
    m.count_failed("ops");   // failed and retried are not deliveries
    m.count_retried("ops");
    EXPECT_EQ(m.sent(), 4u);
}

// The total is the per-target series' sum that /metrics shows, and the notifier's sent() is it.
TEST(StatusSampler, TheTotalIsTheSumOfTheSeriesMetricsShows) {
    notify::NotifyMetrics m;
    for (int i = 0; i < 5; ++i) m.count_sent("a");
    m.count_sent("d");
    m.count_sent("d");
    const std::string text = m.render();
    EXPECT_NE(text.find("ratelimitd_notify_sent_total{target=\"a\"} 5\n"), std::string::npos) << text;
    EXPECT_NE(text.find("ratelimitd_notify_sent_total{target=\"d\"} 2\n"), std::string::npos) << text;
    EXPECT_EQ(m.sent(), 7u);
    notify::Notifier notifier(notify::NotifierOptions{});
    EXPECT_EQ(notifier.sent(), 0u);
}

}  // namespace
}  // namespace ratelimitd::app
