// The rate limit quota service (StreamRateLimitQuotas) as Envoy's rate_limit_quota filter meets
// it, against the real binary: a bucket's first report answered at once with its rule's
// assignment in each strategy, buckets no rule names abandoned, the report bounds leaving
// entries out and never ending the stream with an error, the streams per connection capped,
// a bucket quiet for its idle_after abandoned, a reload changing a limit in the next answer,
// and a stop ending every stream with OK.
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/quota_client.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::test::grpc_rlqs_test {
namespace {

using Strategy = envoy::type::v3::RateLimitStrategy;

std::string rlqs_config(int api_limit) {
    return R"(rlqs:
  web:
    blocked:
      match: {kind: blocked}
      blanket: deny_all
    counted:
      match: {kind: counted}
      limit: 10
      window: 60s
      shadow: true
    per_second:
      match: {kind: rptu, tenant: "t-*"}
      limit: 7
      window: 1s
      strategy: requests_per_time_unit
      reporting_interval: 1s
    api:
      match: {kind: api}
      limit: )" + std::to_string(api_limit) + R"(
      window: 60s
      reporting_interval: 5s
      assignment_ttl: 15s
)";
}

const std::vector<std::string> grpc_any_port{"--grpc-listen", "127.0.0.1:0"};

class Rlqs : public ::testing::Test {
protected:
    Rlqs() : server_(rlqs_config(100), "", grpc_any_port) {
        port_ = grpc_port_from_log(server_.process().wait_for_log("grpc listening on", process_start_bound));
    }

    /// The one answer to a report of `usages`.
    QuotaResponse answer(const std::vector<QuotaUsage>& usages, const std::string& domain = "web") {
        QuotaStreamClient stream(port_);
        EXPECT_TRUE(stream.send(quota_report(domain, usages)));
        auto response = stream.read();
        EXPECT_TRUE(response.has_value());
        EXPECT_TRUE(stream.finish().ok());
        return response.value_or(QuotaResponse{});
    }

    /// One ratelimitd_rlqs_* series of /metrics.
    double metric(const std::string& series) {
        return sample(HttpClient(server_.port()).get("/metrics").body, "ratelimitd_rlqs_" + series);
    }

    Ratelimitd server_;
    unsigned short port_ = 0;
};

TEST_F(Rlqs, AFirstReportIsAnsweredAtOnceWithTheRulesTokenBucket) {
    const auto response = answer({{{{"kind", "api"}, {"route", "/v1"}}, 3, 0}});
    ASSERT_EQ(response.bucket_action_size(), 1);
    const auto& action = response.bucket_action(0);
    EXPECT_EQ(bucket_of(action), (QuotaBucket{{"kind", "api"}, {"route", "/v1"}}));
    ASSERT_TRUE(action.has_quota_assignment_action());
    const auto& assignment = action.quota_assignment_action();
    EXPECT_EQ(assignment.assignment_time_to_live().seconds(), 15);
    ASSERT_TRUE(assignment.rate_limit_strategy().has_token_bucket());
    const auto& bucket = assignment.rate_limit_strategy().token_bucket();
    EXPECT_EQ(bucket.max_tokens(), 100U);
    EXPECT_EQ(bucket.tokens_per_fill().value(), 100U);
    EXPECT_EQ(bucket.fill_interval().seconds(), 60);
}

TEST_F(Rlqs, EachStrategyAndBlanketRuleIsAssignedAsWritten) {
    const auto response = answer({{{{"kind", "rptu"}, {"tenant", "t-42"}}, 1, 0},
                                  {{{"kind", "blocked"}}, 0, 5},
                                  {{{"kind", "counted"}}, 9, 0}});
    ASSERT_EQ(response.bucket_action_size(), 3);
    const auto& rptu = response.bucket_action(0).quota_assignment_action();
    EXPECT_EQ(rptu.rate_limit_strategy().requests_per_time_unit().requests_per_time_unit(), 7U);
    EXPECT_EQ(rptu.rate_limit_strategy().requests_per_time_unit().time_unit(), envoy::type::v3::SECOND);
    // reporting_interval 1s: three of them by default.
    EXPECT_EQ(rptu.assignment_time_to_live().seconds(), 3);
    EXPECT_EQ(response.bucket_action(1).quota_assignment_action().rate_limit_strategy().blanket_rule(),
              Strategy::DENY_ALL);
    // A shadow rule only counts: Envoy admits everything.
    const auto& shadow = response.bucket_action(2).quota_assignment_action().rate_limit_strategy();
    ASSERT_TRUE(shadow.has_blanket_rule());
    EXPECT_EQ(shadow.blanket_rule(), Strategy::ALLOW_ALL);
}

TEST_F(Rlqs, BucketsNoRuleNamesAreAbandoned) {
    // A tenant outside the wildcard, a kind no rule has, a domain with no rules.
    auto response = answer({{{{"kind", "rptu"}, {"tenant", "x-42"}}, 1, 0}, {{{"kind", "other"}}, 1, 0}});
    ASSERT_EQ(response.bucket_action_size(), 2);
    EXPECT_TRUE(response.bucket_action(0).has_abandon_action());
    EXPECT_EQ(bucket_of(response.bucket_action(0)), (QuotaBucket{{"kind", "rptu"}, {"tenant", "x-42"}}));
    EXPECT_TRUE(response.bucket_action(1).has_abandon_action());
    response = answer({{{{"kind", "api"}}, 1, 0}}, "elsewhere");
    ASSERT_EQ(response.bucket_action_size(), 1);
    EXPECT_TRUE(response.bucket_action(0).has_abandon_action());
    EXPECT_EQ(metric("abandons_total"), 3);
    EXPECT_EQ(metric("assignments_total"), 0);
    EXPECT_EQ(metric("reports_total"), 2);
    EXPECT_EQ(metric("streams_total"), 2);
}

TEST_F(Rlqs, AReportPastItsBoundsLosesEntriesNeverTheStream) {
    QuotaStreamClient stream(port_);
    // 101 buckets: the first 100 answered.
    std::vector<QuotaUsage> many;
    for (int i = 0; i < 101; ++i) many.push_back({{{"kind", "api"}, {"n", std::to_string(i)}}, 1, 0});
    ASSERT_TRUE(stream.send(quota_report("web", many)));
    auto response = stream.read();
    ASSERT_TRUE(response.has_value());
    ASSERT_EQ(response->bucket_action_size(), 100);
    EXPECT_EQ(bucket_of(response->bucket_action(99)).at("n"), "99");
    // A key of 129 bytes, a value of 257, an empty id, 17 pairs: left out, the valid one answered.
    QuotaBucket seventeen;
    for (int i = 0; i < 17; ++i) seventeen["k" + std::to_string(i)] = "v";
    ASSERT_TRUE(stream.send(quota_report("web", {{{{std::string(129, 'k'), "v"}}, 1, 0},
                                                  {{{"kind", std::string(257, 'v')}}, 1, 0},
                                                  {{}, 1, 0},
                                                  {seventeen, 1, 0},
                                                  {{{"kind", "api"}}, 1, 0}})));
    response = stream.read();
    ASSERT_TRUE(response.has_value());
    ASSERT_EQ(response->bucket_action_size(), 1);
    EXPECT_EQ(bucket_of(response->bucket_action(0)), (QuotaBucket{{"kind", "api"}}));
    // An empty domain leaves the whole report out: the next answer is the next report's.
    ASSERT_TRUE(stream.send(quota_report("", {{{{"kind", "api"}}, 1, 0}})));
    ASSERT_TRUE(stream.send(quota_report("web", {{{{"kind", "blocked"}}, 1, 0}})));
    response = stream.read();
    ASSERT_TRUE(response.has_value());
    ASSERT_EQ(response->bucket_action_size(), 1);
    EXPECT_EQ(bucket_of(response->bucket_action(0)), (QuotaBucket{{"kind", "blocked"}}));
    // 1 past the hundred, 4 ids past their bounds, 1 behind an empty domain.
    EXPECT_EQ(metric("buckets_left_out_total"), 6);
    EXPECT_EQ(metric("assignments_total"), 102);
    EXPECT_EQ(metric("streams_open"), 1);
    EXPECT_TRUE(stream.finish().ok());
}

TEST_F(Rlqs, AConnectionHoldsAtMostSixteenStreams) {
    const auto channel = QuotaStreamClient::channel_to(port_);
    std::vector<std::unique_ptr<QuotaStreamClient>> held;
    for (int i = 0; i < 16; ++i) {
        held.push_back(std::make_unique<QuotaStreamClient>(channel));
        ASSERT_TRUE(held.back()->send(quota_report("web", {{{{"kind", "api"}}, 1, 0}})));
        ASSERT_TRUE(held.back()->read().has_value()) << "stream " << i;
    }
    // The 17th ends at once with OK and no answer (an error would be Envoy's to admit).
    QuotaStreamClient extra(channel);
    extra.send(quota_report("web", {{{{"kind", "api"}}, 1, 0}}));
    EXPECT_FALSE(extra.read().has_value());
    EXPECT_TRUE(extra.finish().ok());
    EXPECT_EQ(metric("streams_refused_total"), 1);
    // Another connection is not held to this one's count.
    QuotaStreamClient elsewhere(port_);
    ASSERT_TRUE(elsewhere.send(quota_report("web", {{{{"kind", "api"}}, 1, 0}})));
    EXPECT_TRUE(elsewhere.read().has_value());
    // One of the 16 ends: its place is free again.
    EXPECT_TRUE(held.back()->finish().ok());
    held.pop_back();
    EXPECT_TRUE(wait_until(
        [&] {
            QuotaStreamClient again(channel, std::chrono::milliseconds(5'000));
            again.send(quota_report("web", {{{{"kind", "api"}}, 1, 0}}));
            const bool answered = again.read().has_value();
            again.finish();
            return answered;
        },
        std::chrono::milliseconds(10'000)));
    for (auto& stream : held) EXPECT_TRUE(stream->finish().ok());
}

TEST_F(Rlqs, AReloadChangesTheLimitInTheNextAnswer) {
    QuotaStreamClient stream(port_);
    ASSERT_TRUE(stream.send(quota_report("web", {{{{"kind", "api"}}, 1, 0}})));
    auto response = stream.read();
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->bucket_action(0).quota_assignment_action().rate_limit_strategy().token_bucket().max_tokens(),
              100U);
    server_.write_config(rlqs_config(50));
    server_.process().signal(SIGHUP);
    ASSERT_FALSE(server_.process().wait_for_log("reloaded", process_start_bound).empty()) << server_.process().log();
    ASSERT_TRUE(stream.send(quota_report("web", {{{{"kind", "api"}}, 1, 0}})));
    response = stream.read();
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->bucket_action(0).quota_assignment_action().rate_limit_strategy().token_bucket().max_tokens(),
              50U);
    EXPECT_TRUE(stream.finish().ok());
}

// Envoy reports a bucket it no longer uses with no request in it; once the reports' time
// adds up to the rule's idle_after (ten reporting intervals: 50s here) the bucket is abandoned,
// and a request in a report sets it back to zero.
TEST_F(Rlqs, ABucketQuietForItsIdleAfterIsAbandoned) {
    using namespace std::chrono_literals;
    QuotaStreamClient stream(port_);
    const auto action_after = [&stream](std::uint64_t allowed, std::chrono::milliseconds elapsed) {
        EXPECT_TRUE(stream.send(quota_report("web", {{{{"kind", "api"}}, allowed, 0, elapsed}})));
        const auto response = stream.read();
        EXPECT_TRUE(response && response->bucket_action_size() == 1);
        return response ? response->bucket_action(0) : QuotaResponse::BucketAction{};
    };
    EXPECT_TRUE(action_after(0, 30s).has_quota_assignment_action());
    EXPECT_TRUE(action_after(1, 30s).has_quota_assignment_action());   // used: quiet time back to 0
    EXPECT_TRUE(action_after(0, 49'999ms).has_quota_assignment_action());
    EXPECT_TRUE(action_after(0, 1ms).has_abandon_action());            // 50s quiet
    EXPECT_TRUE(action_after(0, 1s).has_quota_assignment_action());    // forgotten: afresh
    EXPECT_EQ(metric("abandons_total"), 1);
    EXPECT_TRUE(stream.finish().ok());
}

// A stopping server ends each stream with OK (Envoy reconnects, to another replica) rather
// than leave it to gRPC's shutdown, which would cancel it after its grace.
TEST_F(Rlqs, AStoppingServerEndsItsStreamsWithOk) {
    QuotaStreamClient stream(port_);
    ASSERT_TRUE(stream.send(quota_report("web", {{{{"kind", "api"}}, 1, 0}})));
    ASSERT_TRUE(stream.read().has_value());
    server_.stop();  // SIGTERM, exit 0
    EXPECT_FALSE(stream.read().has_value());
    const auto status = stream.finish();
    EXPECT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
}

}  // namespace
}  // namespace ratelimitd::test::grpc_rlqs_test
