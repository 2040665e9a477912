// lua/token_bucket.lua's two layouts on a real redis-server (redis_state_layout): the string it
// writes by default and the hash earlier versions wrote. The script of those versions
// (tests/data/lua/token_bucket_before_string_layout.lua) runs beside it: on the same hash both
// answer the same; with `hash` the new one writes what it wrote; a key of another type is no
// bucket; and the commands Redis runs per check are counted.
#include "ratelimitd/core/clock.hpp"
#include "ratelimitd/store/redis/lua_sources.hpp"
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::test::token_bucket_layout_test {
namespace {

std::string source_of(std::string_view name) {
    for (const auto& s : store::redis::lua_sources()) {
        if (s.name == name) return std::string(s.text);
    }
    throw std::runtime_error("no script " + std::string(name));
}

std::string earlier_script() {
    std::ifstream in(std::string(RATELIMITD_TEST_DATA_DIR) + "/lua/token_bucket_before_string_layout.lua");
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().empty()) throw std::runtime_error("tests/data/lua/token_bucket_before_string_layout.lua is missing");
    return text.str();
}

// The real clock's millisecond: Redis's TTLs run on it, so the instants sent stay close to it.
std::int64_t now_ms() { return SystemClock{}.now_ms(); }

std::string n(std::int64_t v) { return std::to_string(v); }

/// One check's numbers: limit 10 tokens per 60 s, a burst of 10, unless a case says otherwise.
struct Call {
    std::string mode;  ///< ARGV[6]: "", "peek", "report:<max_debt>", "refund"
    std::int64_t cost = 1;
    std::int64_t limit = 10;
    std::int64_t window_ms = 60'000;
    std::int64_t burst = 10;
};

class TokenBucketLayout : public ::testing::Test {
protected:
    static void SetUpTestSuite() { redis_ = new RedisServer(); }
    static void TearDownTestSuite() {
        delete redis_;
        redis_ = nullptr;
    }
    void SetUp() override { ASSERT_EQ(redis_->command({"FLUSHALL"}), "OK"); }

    /// `script` on `key` at the instant `at`, writing `layout` ("" or "hash"); the reply.
    static std::string run(const std::string& script, const std::string& key, const Call& c, const std::string& layout,
                           std::int64_t at) {
        return redis_->command({"EVAL", script, "1", key, n(c.limit), n(c.window_ms), n(c.burst), n(c.cost), layout,
                                c.mode, n(at)});
    }
    static std::string run_new(const std::string& key, const Call& c, const std::string& layout, std::int64_t at) {
        return run(new_, key, c, layout, at);
    }
    static std::string run_earlier(const std::string& key, const Call& c, std::int64_t at) {
        return run(earlier_, key, c, "", at);
    }

    /// The hash on `key` as field -> value (empty: no key, or another type).
    static std::map<std::string, std::string> hash_of(const std::string& key) {
        std::map<std::string, std::string> out;
        std::istringstream words(redis_->command({"HGETALL", key}));
        for (std::string f, v; words >> f >> v;) out[f] = v;
        return out;
    }

    /// The string the new layout holds for the hash {l, t, w, b}.
    static std::string as_string(const std::map<std::string, std::string>& h) {
        return "tb:" + h.at("l") + ":" + h.at("t") + ":" + h.at("w") + ":" + h.at("b");
    }

    static void write_hash(const std::string& key, const std::vector<std::string>& fields_and_values) {
        std::vector<std::string> argv{"HSET", key};
        argv.insert(argv.end(), fields_and_values.begin(), fields_and_values.end());
        redis_->command(argv);
    }

    /// Calls of each command since the last CONFIG RESETSTAT (INFO commandstats).
    static std::map<std::string, long long> command_calls() {
        std::map<std::string, long long> out;
        const std::string info = redis_->command({"INFO", "commandstats"});
        static const std::regex line(R"(cmdstat_([a-z|]+):calls=(\d+))");
        for (auto it = std::sregex_iterator(info.begin(), info.end(), line); it != std::sregex_iterator(); ++it) {
            out[(*it)[1]] = std::stoll((*it)[2]);
        }
        return out;
    }

    static RedisServer* redis_;
    static const std::string new_;
    static const std::string earlier_;
};
RedisServer* TokenBucketLayout::redis_ = nullptr;
const std::string TokenBucketLayout::new_ = source_of("token_bucket");
const std::string TokenBucketLayout::earlier_ = earlier_script();

// ---- (a) a hash an earlier version wrote is read exactly, then rewritten as one string ---------

struct OldHashCase {
    const char* name;
    std::vector<std::string> fields;  ///< "@" in a value: the instant of the check plus what follows
    Call call;
};

std::string at_instant(const std::string& v, std::int64_t t0) {
    if (v.empty() || v[0] != '@') return v;
    return n(t0 + std::stoll(v.substr(1)));
}

TEST_F(TokenBucketLayout, AHashOfAnEarlierVersionGetsTheVerdictThatVersionGivesThenBecomesAString) {
    const std::vector<OldHashCase> cases{
        {"3 tokens 6 s ago: 4 now", {"l", "180000", "t", "@-6000", "w", "60000", "b", "10"}, {""}},
        {"written before w and b were kept", {"l", "180000", "t", "@-6000"}, {""}},
        {"numbers changed on reload", {"l", "30000", "t", "@-1000", "w", "30000", "b", "5"}, {"", 2}},
        {"empty: denied, nothing written", {"l", "0", "t", "@0", "w", "60000", "b", "10"}, {"", 3}},
        {"the clock stepped back", {"l", "180000", "t", "@5000", "w", "60000", "b", "10"}, {""}},
        {"a report into debt", {"l", "60000", "t", "@-100", "w", "60000", "b", "10"}, {"report:5", 4}},
        {"a refund that fills it", {"l", "540000", "t", "@-100", "w", "60000", "b", "10"}, {"report:5", -5}},
        {"a peek", {"l", "180000", "t", "@-6000", "w", "60000", "b", "10"}, {"peek"}},
        {"a cluster refund", {"l", "180000", "t", "@-1000", "w", "60000", "b", "10"}, {"refund", 2}},
    };
    const std::int64_t t0 = now_ms();
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        ASSERT_EQ(redis_->command({"FLUSHALL"}), "OK");
        std::vector<std::string> fields;
        for (const auto& f : c.fields) fields.push_back(at_instant(f, t0));
        write_hash("new", fields);
        write_hash("earlier", fields);

        EXPECT_EQ(run_new("new", c.call, "", t0), run_earlier("earlier", c.call, t0));

        const auto earlier_after = hash_of("earlier");
        std::map<std::string, std::string> written;
        for (std::size_t i = 0; i + 1 < fields.size(); i += 2) written[fields[i]] = fields[i + 1];
        if (earlier_after.empty()) {
            EXPECT_EQ(redis_->command({"EXISTS", "new"}), "0") << "full again: the key goes";
        } else if (earlier_after == written) {
            // Nothing written (a denial, a peek): the hash stays as it was, until an admit.
            EXPECT_EQ(hash_of("new"), written);
        } else {
            ASSERT_EQ(redis_->command({"TYPE", "new"}), "string");
            EXPECT_EQ(redis_->command({"GET", "new"}), as_string(earlier_after));
            EXPECT_NEAR(redis_->integer({"PTTL", "new"}), redis_->integer({"PTTL", "earlier"}), 50);
        }
        // Then both read their own layout the same way: a peek a moment later.
        EXPECT_EQ(run_new("new", {"peek"}, "", t0 + 2500), run_earlier("earlier", {"peek"}, t0 + 2500));
    }
}

// ---- (b) with `hash`, the new script writes exactly what the earlier one wrote -----------------

TEST_F(TokenBucketLayout, WithTheHashLayoutEveryStepWritesWhatAnEarlierVersionWrites) {
    const std::int64_t t0 = now_ms();
    const std::vector<std::pair<std::int64_t, Call>> steps{
        {0, {"", 3}},          {1000, {"", 2}},        {1500, {"peek"}},  {2000, {"report:5", 20}},
        {3000, {"", 1}},       {3500, {"refund", 1}},  {4000, {"", 4}},   {5000, {"report:5", -100}},
        {6000, {"", 10}},      {7000, {"", 1, 20, 30'000, 5}},  // the numbers changed on reload
    };
    for (const auto& [dt, call] : steps) {
        SCOPED_TRACE("step at +" + n(dt) + " ms, mode '" + call.mode + "', cost " + n(call.cost));
        EXPECT_EQ(run_new("new", call, "hash", t0 + dt), run_earlier("earlier", call, t0 + dt));
        EXPECT_EQ(redis_->command({"TYPE", "new"}), redis_->command({"TYPE", "earlier"}));
        EXPECT_EQ(hash_of("new"), hash_of("earlier"));
        if (redis_->command({"EXISTS", "earlier"}) == "1") {
            EXPECT_NEAR(redis_->integer({"PTTL", "new"}), redis_->integer({"PTTL", "earlier"}), 50);
        }
    }
    // And an earlier version reading the hash the new one wrote answers as on its own.
    EXPECT_EQ(run_earlier("new", {"", 1}, t0 + 8000), run_earlier("earlier", {"", 1}, t0 + 8000));
}

TEST_F(TokenBucketLayout, WithTheHashLayoutAStringBucketIsReadThenWrittenAsAHash) {
    const std::int64_t t0 = now_ms();
    ASSERT_EQ(run_new("k", {"", 4}, "", t0).substr(0, 7), "1 10 6 ");
    ASSERT_EQ(redis_->command({"TYPE", "k"}), "string");
    EXPECT_EQ(run_new("k", {"", 1}, "hash", t0), "1 10 5 " + n((t0 + 6000 + 999) / 1000) + " 0 6 6000");
    EXPECT_EQ(hash_of("k"), (std::map<std::string, std::string>{
                                {"l", "300000"}, {"t", n(t0)}, {"w", "60000"}, {"b", "10"}}));
    EXPECT_GT(redis_->integer({"PTTL", "k"}), 29'000);
}

// Why the upgrade takes two steps: an earlier version takes a string bucket for another
// algorithm's key, a full bucket, and would admit past the limit.
TEST_F(TokenBucketLayout, AnEarlierVersionTakesAStringBucketForAFullOne) {
    const std::int64_t t0 = now_ms();
    ASSERT_EQ(run_new("k", {"", 10}, "", t0).substr(0, 7), "1 10 0 ");
    EXPECT_EQ(run_new("k", {"", 1}, "", t0).substr(0, 2), "0 ");
    EXPECT_EQ(run_earlier("k", {"", 1}, t0).substr(0, 7), "1 10 9 ") << "the earlier script reads no string";
}

// ---- (d) a key of another type is no bucket: absent until the first admit replaces it ----------

TEST_F(TokenBucketLayout, AKeyOfAnotherTypeCountsAsAbsentAndTheFirstAdmitReplacesIt) {
    const std::int64_t t0 = now_ms();
    struct Foreign {
        const char* name;
        std::vector<std::string> write;
        const char* type;
    };
    // GCRA's string holds four numbers too: read as a bucket it would be 1 token, not 10.
    const std::vector<Foreign> foreign{
        {"a list", {"RPUSH", "k", "a", "b"}, "list"},
        {"a sliding window's hash", {"HSET", "k", "s", "1", "c", "2", "p", "3", "w", "60000"}, "hash"},
        {"a sliding log", {"ZADD", "k", "1", "m"}, "zset"},
        {"a fixed window's counter", {"SET", "k", "5"}, "string"},
        {"GCRA's TAT", {"SET", "k", "60000:" + n(t0) + ":60000:10"}, "string"},
    };
    for (const std::string layout : {"", "hash"}) {
        for (const auto& f : foreign) {
            SCOPED_TRACE(std::string(f.name) + ", layout '" + layout + "'");
            ASSERT_EQ(redis_->command({"FLUSHALL"}), "OK");
            redis_->command(f.write);
            EXPECT_EQ(run_new("k", {"peek"}, layout, t0), "1 10 10 " + n((t0 + 999) / 1000) + " 0 0 0");
            EXPECT_EQ(redis_->command({"TYPE", "k"}), f.type) << "a peek writes nothing";
            EXPECT_EQ(run_new("k", {"", 1}, layout, t0), "1 10 9 " + n((t0 + 6000 + 999) / 1000) + " 0 6 6000");
            if (layout.empty()) {
                EXPECT_EQ(redis_->command({"GET", "k"}), "tb:540000:" + n(t0) + ":60000:10");
            } else {
                EXPECT_EQ(hash_of("k"), (std::map<std::string, std::string>{
                                            {"l", "540000"}, {"t", n(t0)}, {"w", "60000"}, {"b", "10"}}));
            }
            EXPECT_GT(redis_->integer({"PTTL", "k"}), 5'000);
        }
    }
}

// The other way round: a bucket left on the key when the policy moves to GCRA on reload is
// foreign to GCRA. Without the "tb:" tag, this bucket's level (8.64e13 units) would read as a
// TAT far in the future, and GCRA would deny for years.
TEST_F(TokenBucketLayout, GcraTakesABucketForAForeignKey) {
    const std::int64_t t0 = now_ms();
    const Call big{"", 1, 1'000'000, 86'400'000, 1'000'000};
    ASSERT_EQ(run_new("k", big, "", t0).substr(0, 2), "1 ");
    Call peek = big;
    peek.mode = "peek";
    EXPECT_EQ(run(source_of("gcra"), "k", peek, "", t0), "1 1000000 1000000 " + n((t0 + 999) / 1000) + " 0 0 0");
}

// ---- (e) the commands Redis runs per check ----------------------------------------------------

TEST_F(TokenBucketLayout, AnAdmitRunsAGetAndASetADenialAGetOnly) {
    const std::int64_t t0 = now_ms();
    constexpr int checks = 20;
    ASSERT_EQ(redis_->command({"CONFIG", "RESETSTAT"}), "OK");
    // The instant given, as batch.lua and multi.lua give it (they read TIME once per call).
    for (int i = 0; i < checks; ++i) ASSERT_EQ(run_new("k" + n(i % 4), {"", 2}, "", t0 + i).substr(0, 2), "1 ");
    auto calls = command_calls();
    EXPECT_EQ(calls["get"], checks);
    EXPECT_EQ(calls["set"], checks);
    for (const char* none : {"type", "hmget", "hset", "pexpire", "del", "time", "exists"}) {
        EXPECT_EQ(calls.count(none), 0u) << none;
    }

    ASSERT_EQ(redis_->command({"CONFIG", "RESETSTAT"}), "OK");
    for (int i = 0; i < checks; ++i) ASSERT_EQ(run_new("k0", {"", 9}, "", t0 + checks).substr(0, 2), "0 ");
    calls = command_calls();
    EXPECT_EQ(calls["get"], checks);
    for (const char* none : {"set", "type", "hmget", "hset", "pexpire", "del", "time"}) {
        EXPECT_EQ(calls.count(none), 0u) << none;
    }

    // A single check reads TIME itself; the hash layout costs what it always did.
    ASSERT_EQ(redis_->command({"CONFIG", "RESETSTAT"}), "OK");
    ASSERT_EQ(redis_->command({"EVAL", new_, "1", "single", "10", "60000", "10", "1", "", ""}).substr(0, 2), "1 ");
    calls = command_calls();
    EXPECT_EQ(calls["time"], 1);
    EXPECT_EQ(calls["get"], 1);
    EXPECT_EQ(calls["set"], 1);
    ASSERT_EQ(redis_->command({"CONFIG", "RESETSTAT"}), "OK");
    ASSERT_EQ(run_new("h", {""}, "hash", t0).substr(0, 2), "1 ");
    ASSERT_EQ(run_new("h", {""}, "hash", t0 + 1).substr(0, 2), "1 ");
    calls = command_calls();
    EXPECT_EQ(calls["type"], 2);
    EXPECT_EQ(calls["hmget"], 1);
    EXPECT_EQ(calls["hset"], 2);
    EXPECT_EQ(calls["pexpire"], 2);
    EXPECT_EQ(calls.count("get"), 0u);
}

// ---- (c) exact admission through the sidecar, in each layout and in a fleet mixing them -------

const char* const config = R"(
policies:
  tb: { algorithm: token_bucket, limit: 20, window: 60s }
)";

HttpResponse check(HttpClient& c, const std::string& tenant) {
    return c.post("/v1/check", R"({"policy":"tb","tenant":")" + tenant + R"("})");
}

class LayoutSetting : public TokenBucketLayout, public ::testing::WithParamInterface<const char*> {};

TEST_P(LayoutSetting, FiftyConcurrentChecksAdmitExactlyTheLimitAndTheKeyHasTheLayout) {
    const std::string layout = GetParam();
    Ratelimitd server(config, redis_->url(), {"--redis-state-layout", layout});
    const auto tally = fire(server.port(), 50, 16, [](HttpClient& c) { return check(c, "acme"); });
    EXPECT_EQ(tally.allowed, 20);
    EXPECT_EQ(tally.denied, 30);
    EXPECT_EQ(tally.other, 0);
    const auto keys = redis_->keys();
    ASSERT_EQ(keys.size(), 1u);
    EXPECT_EQ(redis_->command({"TYPE", keys[0]}), layout);
    EXPECT_GT(redis_->integer({"PTTL", keys[0]}), 0);
}

INSTANTIATE_TEST_SUITE_P(Layouts, LayoutSetting, ::testing::Values("string", "hash"));

// The fleet between the two steps of an upgrade: sidecars writing either layout on one Redis,
// each reading both, admit exactly the limit between them.
TEST_F(TokenBucketLayout, SidecarsWritingEitherLayoutShareOneBudgetExactly) {
    Ratelimitd hash_writer(config, redis_->url(), {"--redis-state-layout", "hash"});
    Ratelimitd string_writer(config, redis_->url(), {}, {"RATELIMITD_REDIS_STATE_LAYOUT=string"});
    Tally a;
    Tally b;
    std::thread other([&] { a = fire(hash_writer.port(), 30, 8, [](HttpClient& c) { return check(c, "acme"); }); });
    b = fire(string_writer.port(), 30, 8, [](HttpClient& c) { return check(c, "acme"); });
    other.join();
    EXPECT_EQ(a.allowed + b.allowed, 20);
    EXPECT_EQ(a.denied + b.denied, 40);
    EXPECT_EQ(a.other + b.other, 0);
}

}  // namespace
}  // namespace ratelimitd::test::token_bucket_layout_test
