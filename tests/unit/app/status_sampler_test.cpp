// The status sampler's reading of the quota webhooks' deliveries: the notifier's own text, as
// /metrics shows it, summed over targets (NotifyMetrics keeps no total of its own).
#include "ratelimitd/app/status_sampler.hpp"
#include "ratelimitd/notify/notify_metrics.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::app {
namespace {

TEST(StatusSampler, WebhookDeliveriesAreSummedOverTargets) {
    notify::NotifyMetrics m;
    EXPECT_EQ(webhooks_sent_in(m.render()), 0u);
    for (int i = 0; i < 3; ++i) m.count_sent("ops");
    m.count_sent("billing");
    m.count_failed("ops");   // failed and retried are not deliveries
    m.count_retried("ops");
    EXPECT_EQ(webhooks_sent_in(m.render()), 4u);
}

TEST(StatusSampler, OnlySampleLinesOfTheSentSeriesCount) {
    const std::string text =
        "# HELP ratelimitd_notify_sent_total{x} 99\n"
        "ratelimitd_notify_sent_total{target=\"a\"} 5\n"
        "xratelimitd_notify_sent_total{target=\"b\"} 7\n"
        "ratelimitd_notify_sent_total{target=\"c\"} not-a-number\n"
        "ratelimitd_notify_sent_total{target=\"d\"} 2";
    EXPECT_EQ(webhooks_sent_in(text), 7u);
}

}  // namespace
}  // namespace ratelimitd::app
