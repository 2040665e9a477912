// max_delay through /v1/check on the real binary (issue 50): 200 requests at once on rate
// 10/s, burst 5, max_delay 10 s, on the embedded store, on one sidecar with Redis, and on three
// sidecars sharing one Redis. The figures asserted come from the delays the servers return.
#include "support/concurrent_calls.hpp"
#include "support/http_client.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ratelimitd::test::delay_fleet_test {
namespace {

using json = nlohmann::json;

const char* const config = R"(
policies:
  smooth-tb: {algorithm: token_bucket, limit: 10, window: 1s, burst: 5, max_delay: 10s}
  smooth-gcra: {algorithm: gcra, limit: 10, window: 1s, burst: 5, max_delay: 10s}
)";

enum class Fleet { embedded, one_redis, three_on_one_redis };

/// One answer as the client saw it, with its own wall-clock reading around the call (the
/// server's clock, Redis's or its own, is the same CLOCK_REALTIME on this machine).
struct Seen {
    int status = 0;
    std::int64_t delay_ms = -1;  ///< the body's delay_ms (0 when absent and admitted)
    std::string header;          ///< X-RateLimit-Delay-Ms
    std::int64_t sent_ms = 0;
    std::int64_t answered_ms = 0;
};

std::int64_t wall_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Spaced by the rate: each reservation's release (its decision instant + its delay) lies in
// [sent + delay, answered + 1 + delay) (the client reads whole milliseconds). Due times are
// exactly 100 ms apart, and a release is its due time or up to 1 ms after it (the decision
// instant is read in whole milliseconds too, and the delay rounds up), so no span of 999 ms can
// hold more than 10 releases (a 1 s span can: the first due time 0.5 ms before it, released
// inside it, and the eleventh 0.5 ms before its end; seen once in the sanitized suite). Count
// those certainly inside.
void expect_spaced_by_the_rate(const std::vector<const Seen*>& delayed) {
    constexpr std::int64_t span_ms = 999;
    for (const Seen* from : delayed) {
        const std::int64_t start = from->answered_ms + from->delay_ms;
        int inside = 0;
        for (const Seen* s : delayed) {
            if (s->sent_ms + s->delay_ms >= start && s->answered_ms + 1 + s->delay_ms <= start + span_ms) ++inside;
        }
        EXPECT_LE(inside, 10) << "releases within " << span_ms << " ms from " << start;
    }
}

class DelayFleet : public ::testing::TestWithParam<std::tuple<Fleet, std::string>> {
protected:
    void SetUp() override {
        const Fleet kind = std::get<0>(GetParam());
        if (kind != Fleet::embedded) redis_ = std::make_unique<RedisServer>();
        const int sidecars = kind == Fleet::three_on_one_redis ? 3 : 1;
        for (int i = 0; i < sidecars; ++i) {
            fleet_.push_back(std::make_unique<Ratelimitd>(config, redis_ ? redis_->url() : std::string()));
        }
    }

    /// `total` checks of one key at once: 20 clients, each its own connection to the sidecar
    /// of its number, each sending its own slice.
    std::vector<Seen> burst(int total) {
        constexpr int clients = 20;
        std::mutex mu;
        std::vector<Seen> seen;
        const std::string body = json{{"policy", std::get<1>(GetParam())}, {"tenant", "t"}}.dump();
        run_concurrently(clients, [&](int c) {
            HttpClient client(fleet_[static_cast<std::size_t>(c) % fleet_.size()]->port());
            for (int n = c; n < total; n += clients) {
                Seen s;
                s.sent_ms = wall_ms();
                const auto r = client.post("/v1/check", body);
                s.answered_ms = wall_ms();
                s.status = r.status;
                const auto j = json::parse(r.body, nullptr, false);
                if (j.is_object()) s.delay_ms = j.value("delay_ms", std::int64_t{0});
                s.header = r.header("x-ratelimit-delay-ms");
                std::lock_guard lock(mu);
                seen.push_back(s);
            }
        });
        return seen;
    }

    std::unique_ptr<RedisServer> redis_;
    std::vector<std::unique_ptr<Ratelimitd>> fleet_;
};

TEST_P(DelayFleet, TwoHundredAtOnceAreSpacedByTheRateUpToMaxDelayAndTheRestDenied) {
    const std::vector<Seen> seen = burst(200);
    ASSERT_EQ(seen.size(), 200u);
    std::vector<const Seen*> delayed;
    int at_once = 0;
    int denied = 0;
    std::int64_t first_sent = seen.front().sent_ms;
    std::int64_t last_answered = 0;
    for (const Seen& s : seen) {
        first_sent = std::min(first_sent, s.sent_ms);
        last_answered = std::max(last_answered, s.answered_ms);
        ASSERT_TRUE(s.status == 200 || s.status == 429) << s.status;
        if (s.status == 429) {
            ++denied;
            EXPECT_EQ(s.delay_ms, 0) << "a denial says no delay";
            continue;
        }
        EXPECT_GE(s.delay_ms, 0);
        EXPECT_LE(s.delay_ms, 10'000) << "never beyond max_delay";
        if (s.delay_ms == 0) {
            ++at_once;
            EXPECT_EQ(s.header, "") << "an admit at once has no delay header";
        } else {
            delayed.push_back(&s);
            EXPECT_EQ(s.header, std::to_string(s.delay_ms)) << "the header says what the body says";
        }
    }
    // The burst passes at once, once across the fleet: every later check finds the queue
    // non-empty (it drains only 10 s after the last reservation).
    EXPECT_EQ(at_once, 5);
    // 10 s of queue at 10/s: 100 reservations, plus one per 100 ms the burst of requests took
    // to be decided (the refill meanwhile); the rest denied.
    const auto reserved = static_cast<std::int64_t>(delayed.size());
    EXPECT_GE(reserved, 100);
    EXPECT_LE(reserved, 100 + (last_answered - first_sent) / 100 + 1);
    EXPECT_EQ(denied, 200 - at_once - static_cast<int>(reserved));
    expect_spaced_by_the_rate(delayed);
    // The 100th reservation is due max_delay after the queue began (no sooner than the first
    // send), so some delay is at least max_delay less the time the requests took.
    const auto longest = std::max_element(delayed.begin(), delayed.end(),
                                          [](const Seen* a, const Seen* b) { return a->delay_ms < b->delay_ms; });
    ASSERT_NE(longest, delayed.end());
    EXPECT_GE((*longest)->delay_ms, 10'000 - (last_answered - first_sent));
    // The figures, in the XML report (--gtest_output=xml): what this run's fleet answered.
    std::int64_t shortest = (*longest)->delay_ms;
    for (const Seen* s : delayed) shortest = std::min(shortest, s->delay_ms);
    RecordProperty("at_once", at_once);
    RecordProperty("reserved", static_cast<int>(reserved));
    RecordProperty("denied", denied);
    RecordProperty("shortest_delay_ms", static_cast<int>(shortest));
    RecordProperty("longest_delay_ms", static_cast<int>((*longest)->delay_ms));
    RecordProperty("burst_took_ms", static_cast<int>(last_answered - first_sent));
}

std::string name_of(const ::testing::TestParamInfo<std::tuple<Fleet, std::string>>& info) {
    static const char* const fleets[] = {"Embedded", "OneRedis", "ThreeSidecarsOneRedis"};
    const std::string fleet = fleets[static_cast<int>(std::get<0>(info.param))];
    return fleet + (std::get<1>(info.param) == "smooth-tb" ? "TokenBucket" : "Gcra");
}

INSTANTIATE_TEST_SUITE_P(StoresAndAlgorithms, DelayFleet,
                         ::testing::Combine(::testing::Values(Fleet::embedded, Fleet::one_redis,
                                                              Fleet::three_on_one_redis),
                                            ::testing::Values(std::string("smooth-tb"), std::string("smooth-gcra"))),
                         name_of);

}  // namespace
}  // namespace ratelimitd::test::delay_fleet_test
