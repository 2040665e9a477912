// envoyproxy/ratelimit's Redis cache tests (test/redis/fixed_cache_impl_test.go) on the wire:
// where its test has the mocked Redis answer INCRBY with a count, the real redis-server holds
// that count minus the call's hits in envoyproxy/ratelimit's own key before the call (ERL mode
// uses its key layout), and the answer is checked field by field: code, current_limit,
// limit_remaining and duration_until_reset (the unit minus now mod the unit, as its
// CalculateReset). Test names: ErlCompat.Redis_<its Go test name>.
#include "grpc/erl_mode_fixture.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::test::grpc_erl_compat_cache_test {
namespace {

using Unit = RlsResponse::RateLimit::Unit;
constexpr auto OK = RlsResponse::OK;
constexpr auto OVER = RlsResponse::OVER_LIMIT;
constexpr Unit unit_second = RlsResponse::RateLimit::SECOND;
constexpr Unit unit_minute = RlsResponse::RateLimit::MINUTE;
constexpr Unit unit_hour = RlsResponse::RateLimit::HOUR;
constexpr Unit unit_day = RlsResponse::RateLimit::DAY;

// The limits its tests hand the cache, as one config (domain "domain", as there).
const char* const cache_config = R"(domain: domain
descriptors:
  - {key: key, value: value, rate_limit: {unit: second, requests_per_unit: 10}}
  - key: key2
    value: value2
    descriptors:
      - {key: subkey2, value: subvalue2, rate_limit: {unit: minute, requests_per_unit: 10}}
  - key: key3
    value: value3
    rate_limit: {unit: hour, requests_per_unit: 10}
    descriptors:
      - {key: subkey3, value: subvalue3, rate_limit: {unit: day, requests_per_unit: 10}}
  - {key: key4, value: value4, rate_limit: {unit: hour, requests_per_unit: 15}}
  - {key: key5, value: value5, rate_limit: {unit: second, requests_per_unit: 20}}
  - {key: key6, value: value6, rate_limit: {unit: second, requests_per_unit: 8}}
  - {key: key7, value: value7, rate_limit: {unit: second, requests_per_unit: 20}}
  - {key: key8, value: value8, rate_limit: {unit: second, requests_per_unit: 20}}
  - {key: key9, value: value9, rate_limit: {unit: second, requests_per_unit: 20}}
  - {key: key10, value: value10, rate_limit: {unit: second, requests_per_unit: 10}}
)";

std::int64_t seconds_of(Unit unit) {
    switch (unit) {
        case RlsResponse::RateLimit::SECOND: return 1;
        case RlsResponse::RateLimit::MINUTE: return 60;
        case RlsResponse::RateLimit::HOUR: return 3600;
        default: return 86400;
    }
}

/// A counter set before a call: what the mocked INCRBY answered, less the call's hits.
struct Seed {
    ErlEntries entries;
    Unit unit;
    long long count;
};
/// One call of a scenario, after its seeds.
struct Step {
    std::vector<Seed> seeds;
    std::vector<ErlEntries> descriptors;
    std::vector<std::uint64_t> hits;
};

class ErlCompatRedis : public ErlModeTest {
protected:
    void SetUp() override {
        ErlModeTest::SetUp();
        vars_["EXPIRATION_JITTER_MAX_SECONDS"] = "0";  // its tests' caches have no jitter
    }
    void serve_config(const std::string& text) {
        std::ofstream(config_dir() / "domain.yaml") << text;
        serve();
    }
    /// Runs `steps` within one second (so every window and every reset is that second's),
    /// from empty counters; again when a second begins between the first seed and the last answer.
    std::vector<RlsResponse> in_one_second(const std::vector<Step>& steps) {
        for (int attempt = 0; attempt < 5; ++attempt) {
            fresh_counters();
            if (per_second_) per_second_->command({"FLUSHALL"});
            at_ = epoch_seconds();
            std::vector<RlsResponse> answers;
            for (const auto& step : steps) {
                for (const auto& s : step.seeds) {
                    store_of(s.unit).command({"SET", key_of(s.entries, s.unit), std::to_string(s.count)});
                }
                answers.push_back(call("domain", step.descriptors, step.hits));
            }
            if (epoch_seconds() == at_) return answers;
        }
        ADD_FAILURE() << "no second held the calls";
        return std::vector<RlsResponse>(steps.size());
    }
    std::string key_of(const ErlEntries& entries, Unit unit) const {
        return erl_key("domain", entries, seconds_of(unit), at_);
    }
    /// REDIS_PERSECOND=true: a second Redis, which holds the SECOND limits' counters.
    void use_per_second_redis() {
        per_second_.emplace();
        vars_["REDIS_PERSECOND"] = "true";
        vars_["REDIS_PERSECOND_SOCKET_TYPE"] = "tcp";
        vars_["REDIS_PERSECOND_URL"] = "127.0.0.1:" + std::to_string(per_second_->port());
    }
    /// The Redis that holds the counters of `unit`'s limits.
    const RedisServer& store_of(Unit unit) const {
        return per_second_ && unit == unit_second ? *per_second_ : redis_;
    }
    long long count_of(const ErlEntries& entries, Unit unit) const { return count_in(store_of(unit), entries, unit); }
    long long count_in(const RedisServer& server, const ErlEntries& entries, Unit unit) const {
        const std::string v = server.command({"GET", key_of(entries, unit)});
        return v.empty() || v == "(nil)" ? 0 : std::stoll(v);
    }
    /// Status `i` of `res` is {code, limit per_unit/unit, remaining, reset of that unit now}.
    void expect_status(const RlsResponse& res, int i, RlsResponse::Code code, std::uint32_t per_unit, Unit unit,
                       std::uint32_t remaining) const {
        ASSERT_GT(res.statuses_size(), i) << res.DebugString();
        const auto& s = res.statuses(i);
        EXPECT_EQ(s.code(), code) << res.DebugString();
        EXPECT_EQ(s.current_limit().requests_per_unit(), per_unit) << res.DebugString();
        EXPECT_EQ(s.current_limit().unit(), unit) << res.DebugString();
        EXPECT_EQ(s.limit_remaining(), remaining) << res.DebugString();
        EXPECT_EQ(s.duration_until_reset().seconds(), seconds_of(unit) - at_ % seconds_of(unit)) << res.DebugString();
    }

    /// testRedis's calls and answers (defined below its descriptors).
    void test_redis();

    std::int64_t at_ = 0;
    std::optional<RedisServer> per_second_;
};

const ErlEntries key_value{{"key", "value"}};
const ErlEntries key2{{"key2", "value2"}};
const ErlEntries key2_sub{{"key2", "value2"}, {"subkey2", "subvalue2"}};
const ErlEntries key3{{"key3", "value3"}};
const ErlEntries key3_sub{{"key3", "value3"}, {"subkey3", "subvalue3"}};
const ErlEntries key4{{"key4", "value4"}};

// testRedis (WithoutPerSecondRedis): INCRBY answers 5 of 10/s; a descriptor with no limit
// beside one over 10/min (hits 0 and 1); hits_addend 0 on a counter past its limit is over.
TEST_F(ErlCompatRedis, Redis_TestRedis_WithoutPerSecondRedis) { test_redis(); }

// WithPerSecondRedis: the same answers, the 10/s counter in the per-second Redis alone.
TEST_F(ErlCompatRedis, Redis_TestRedis_WithPerSecondRedis) {
    use_per_second_redis();
    test_redis();
    EXPECT_EQ(count_in(redis_, key_value, unit_second), 0) << "no per-second counter in REDIS_URL's Redis";
    EXPECT_EQ(count_in(*per_second_, key2_sub, unit_minute), 0) << "no minute counter in the per-second Redis";
}

void ErlCompatRedis::test_redis() {
    ASSERT_NO_FATAL_FAILURE(serve_config(cache_config));
    const auto first = in_one_second({{{{key_value, unit_second, 4}}, {key_value}, {1}}});
    expect_status(first[0], 0, OK, 10, unit_second, 5);
    EXPECT_EQ(first[0].overall_code(), OK);
    EXPECT_EQ(count_of(key_value, unit_second), 5) << "its key, charged once";

    const auto second = in_one_second({{{{key2_sub, unit_minute, 10}}, {key2, key2_sub}, {0, 1}}});
    ASSERT_EQ(second[0].statuses_size(), 2);
    EXPECT_EQ(second[0].statuses(0).code(), OK);
    EXPECT_FALSE(second[0].statuses(0).has_current_limit());
    EXPECT_EQ(second[0].statuses(0).limit_remaining(), 0u);
    EXPECT_FALSE(second[0].statuses(0).has_duration_until_reset()) << "no limit, no reset";
    expect_status(second[0], 1, OVER, 10, unit_minute, 0);
    EXPECT_EQ(second[0].overall_code(), OVER);
    EXPECT_EQ(count_of(key2_sub, unit_minute), 11);

    const auto third = in_one_second(
        {{{{key3, unit_hour, 11}, {key3_sub, unit_day, 12}}, {key3, key3_sub}, {0, 1}}});
    expect_status(third[0], 0, OVER, 10, unit_hour, 0);
    expect_status(third[0], 1, OVER, 10, unit_day, 0);
    EXPECT_EQ(count_of(key3, unit_hour), 11) << "hits_addend 0 charges nothing";
    EXPECT_EQ(count_of(key3_sub, unit_day), 13);
}

// TestNearLimit: 15/h answered at counts 11, 13, 16; then hits_addend above 1 against 20/s,
// 8/s and 10/s limits, under, at and over the limit.
TEST_F(ErlCompatRedis, Redis_TestNearLimit) {
    ASSERT_NO_FATAL_FAILURE(serve_config(cache_config));
    const auto r = in_one_second({{{{key4, unit_hour, 10}}, {key4}, {1}},
                                  {{{key4, unit_hour, 12}}, {key4}, {1}},
                                  {{{key4, unit_hour, 15}}, {key4}, {1}}});
    expect_status(r[0], 0, OK, 15, unit_hour, 4);
    expect_status(r[1], 0, OK, 15, unit_hour, 2);
    expect_status(r[2], 0, OVER, 15, unit_hour, 0);

    struct Case {
        const char* n;
        std::uint64_t hits;
        long long after;
        std::uint32_t limit;
        RlsResponse::Code code;
        std::uint32_t remaining;
    };
    const std::vector<Case> cases{{"5", 3, 5, 20, OK, 15},   {"6", 2, 7, 8, OK, 1},    {"7", 3, 19, 20, OK, 1},
                                  {"8", 3, 22, 20, OVER, 0}, {"9", 7, 22, 20, OVER, 0}, {"10", 3, 30, 10, OVER, 0}};
    for (const Case& c : cases) {
        const ErlEntries e{{std::string("key") + c.n, std::string("value") + c.n}};
        const auto a = in_one_second({{{{e, unit_second, c.after - static_cast<long long>(c.hits)}}, {e}, {c.hits}}});
        expect_status(a[0], 0, c.code, c.limit, unit_second, c.remaining);
        EXPECT_EQ(count_of(e, unit_second), c.after) << "key" << c.n;
    }
}

// TestRedisWithJitter: the answer is unchanged; the key's TTL is the unit plus a jitter below
// EXPIRATION_JITTER_MAX_SECONDS (3600 there and here).
TEST_F(ErlCompatRedis, Redis_TestRedisWithJitter) {
    vars_["EXPIRATION_JITTER_MAX_SECONDS"] = "3600";
    ASSERT_NO_FATAL_FAILURE(serve_config(cache_config));
    const auto r = in_one_second({{{{key_value, unit_second, 4}}, {key_value}, {1}}});
    expect_status(r[0], 0, OK, 10, unit_second, 5);
    const long long ttl = redis_.integer({"TTL", key_of(key_value, unit_second)});
    EXPECT_GE(ttl, 0);
    EXPECT_LE(ttl, 1 + 3600);
    // Without jitter a 1 s key lives at most 1 s: ten keys all that short would mean no jitter.
    long long longest = 0;
    for (int i = 0; i < 10; ++i) {
        const ErlEntries e{{"key", "value"}};
        in_one_second({{{}, {e}, {1}}});
        longest = std::max(longest, redis_.integer({"TTL", key_of(e, unit_second)}));
    }
    EXPECT_GT(longest, 1) << "EXPIRE carries the jitter";
}

// TestOverLimitWithLocalCache: 15/h at 11, 13, 16 (over), then a fourth call answered over from
// its local cache. ratelimitd's denial cache keeps no such counter (docs/envoy.md): the fourth
// call is charged in Redis (17), the answer is the same.
TEST_F(ErlCompatRedis, Redis_TestOverLimitWithLocalCache) {
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "100";
    ASSERT_NO_FATAL_FAILURE(serve_config(cache_config));
    const auto r = in_one_second({{{{key4, unit_hour, 10}}, {key4}, {1}},
                                  {{{key4, unit_hour, 12}}, {key4}, {1}},
                                  {{{key4, unit_hour, 15}}, {key4}, {1}},
                                  {{}, {key4}, {1}}});
    expect_status(r[0], 0, OK, 15, unit_hour, 4);
    expect_status(r[1], 0, OK, 15, unit_hour, 2);
    expect_status(r[2], 0, OVER, 15, unit_hour, 0);
    expect_status(r[3], 0, OVER, 15, unit_hour, 0);
    EXPECT_EQ(r[3].overall_code(), OVER);
}

// TestOverLimitWithLocalCacheShadowRule: the same counts on a shadow_mode rule answer OK, with
// limit_remaining 0 once past the limit, the fourth call too.
TEST_F(ErlCompatRedis, Redis_TestOverLimitWithLocalCacheShadowRule) {
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "100";
    ASSERT_NO_FATAL_FAILURE(serve_config(
        "domain: domain\ndescriptors:\n  - {key: key4, value: value4, shadow_mode: true, rate_limit: {unit: hour, "
        "requests_per_unit: 15}}\n"));
    const auto r = in_one_second({{{{key4, unit_hour, 10}}, {key4}, {1}},
                                  {{{key4, unit_hour, 12}}, {key4}, {1}},
                                  {{{key4, unit_hour, 15}}, {key4}, {1}},
                                  {{}, {key4}, {1}}});
    expect_status(r[0], 0, OK, 15, unit_hour, 4);
    expect_status(r[1], 0, OK, 15, unit_hour, 2);
    expect_status(r[2], 0, OK, 15, unit_hour, 0);
    expect_status(r[3], 0, OK, 15, unit_hour, 0);
    EXPECT_EQ(r[3].overall_code(), OK);
}

// TestOverLimitWithStopCacheKeyIncrementWhenOverlimitConfig: 15/h and 14/h from 10 each;
// hits [1,1] then [2,2] charge both; the next [2,2] takes 14/h over, so only it is charged
// (to 15) and the 15/h counter stays at 13.
TEST_F(ErlCompatRedis, Redis_TestOverLimitWithStopCacheKeyIncrementWhenOverlimitConfig) {
    vars_["STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT"] = "true";
    vars_["LOCAL_CACHE_SIZE_IN_BYTES"] = "100";
    ASSERT_NO_FATAL_FAILURE(serve_config(
        "domain: domain\ndescriptors:\n"
        "  - {key: key4, value: value4, rate_limit: {unit: hour, requests_per_unit: 15}}\n"
        "  - {key: key5, value: value5, rate_limit: {unit: hour, requests_per_unit: 14}}\n"));
    const ErlEntries key5{{"key5", "value5"}};
    const auto r = in_one_second({{{{key4, unit_hour, 10}, {key5, unit_hour, 10}}, {key4, key5}, {1, 1}},
                                  {{}, {key4, key5}, {2, 2}},
                                  {{}, {key4, key5}, {2, 2}}});
    expect_status(r[0], 0, OK, 15, unit_hour, 4);
    expect_status(r[0], 1, OK, 14, unit_hour, 3);
    expect_status(r[1], 0, OK, 15, unit_hour, 2);
    expect_status(r[1], 1, OK, 14, unit_hour, 1);
    expect_status(r[2], 0, OK, 15, unit_hour, 2);
    expect_status(r[2], 1, OVER, 14, unit_hour, 0);
    EXPECT_EQ(r[2].overall_code(), OVER);
    EXPECT_EQ(count_of(key4, unit_hour), 13) << "not charged beside one going over";
    EXPECT_EQ(count_of(key5, unit_hour), 15) << "the one going over is charged, as there";
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_compat_cache_test
