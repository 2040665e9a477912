// Sentinel failover against real servers: a primary, a replica and one sentinel. ratelimitd,
// given redis-sentinel://, counts exactly on the primary; when the primary is SIGKILLed each
// policy answers by its failure mode within the store deadline; once the sentinel has
// promoted the replica, ratelimitd follows (the delay is printed and bounded) and counts
// exactly on the new primary. Also: a READONLY reply (a replica) is a store failure.
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"
#include "support/sentinel.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <optional>
#include <thread>

namespace ratelimitd::test::sentinel_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

const char* const config = R"(
store_timeout: 100ms
policies:
  open:
    algorithm: fixed_window
    limit: 5
    window: 60s
    on_store_error: allow
  closed:
    algorithm: sliding_log
    limit: 5
    window: 60s
    on_store_error: deny
)";

// A request during the outage: the 100 ms store deadline plus room for a loaded 2-core machine.
constexpr auto latency_bound = 750ms;
// How long ratelimitd may take to use the new primary once the sentinel names it (measured:
// a few hundred ms; see the README).
constexpr auto follow_bound = 10s;

int admitted(unsigned short port, const std::string& policy, const std::string& tenant) {
    return fire(port, 8, 8, [&](HttpClient& c) {
               return c.post("/v1/check", json{{"policy", policy}, {"tenant", tenant}}.dump());
           }).allowed;
}

/// A replication offset from INFO replication (`master_repl_offset` on a primary,
/// `slave_repl_offset` on a replica); -1 when absent.
long long repl_offset(const RedisServer& redis, const std::string& field) {
    const std::string info = redis.command({"INFO", "replication"});
    const auto at = info.find(field + ":");
    return at == std::string::npos ? -1 : std::stoll(info.substr(at + field.size() + 1));
}

bool degraded(const HttpResponse& r) { return !r.header("x-ratelimit-degraded").empty(); }

/// Both policies decided by Redis (not by on_store_error) on 12 fresh connections in a row,
/// so every server thread's pool has followed.
bool every_thread_decides(unsigned short port) {
    static int probes = 0;  // a fresh tenant per probe: never near the limit
    for (int i = 0; i < 12; ++i) {
        HttpClient c(port);
        const std::string tenant = "probe-" + std::to_string(++probes);
        auto open = c.post("/v1/check", json{{"policy", "open"}, {"tenant", tenant}}.dump());
        auto closed = c.post("/v1/check", json{{"policy", "closed"}, {"tenant", tenant}}.dump());
        if (open.status != 200 || degraded(open) || closed.status != 200 || degraded(closed)) return false;
    }
    return true;
}

/// What the checks met from the primary's kill until ratelimitd followed the promotion.
struct Outage {
    std::map<std::string, std::map<std::string, int>> seen;  // policy -> outcome -> count
    std::chrono::milliseconds worst{0};
    std::optional<steady::time_point> promoted;
    std::optional<steady::time_point> followed;
};

/// Outage: one client alternates the policies on fresh tenants until ratelimitd follows (25 s
/// at most); the promotion is read from the sentinel meanwhile.
Outage ride_out_the_failover(const RedisSentinel& sentinel, unsigned short port, const std::string& new_primary,
                             steady::time_point killed) {
    Outage out;
    HttpClient client(port);
    for (int n = 0; steady::now() - killed < 25s; ++n) {
        if (!out.promoted && sentinel.master_address() == new_primary) out.promoted = steady::now();
        const std::string policy = n % 2 ? "open" : "closed";
        const auto t0 = steady::now();
        auto r = client.post("/v1/check", json{{"policy", policy}, {"tenant", "during-" + std::to_string(n)}}.dump());
        out.worst = std::max(out.worst, std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t0));
        const std::string outcome = std::to_string(r.status) + (degraded(r) ? "+degraded" : "");
        ++out.seen[policy][outcome];
        if (out.promoted && !degraded(r) && every_thread_decides(port)) {
            out.followed = steady::now();
            break;
        }
        std::this_thread::sleep_for(10ms);
    }
    return out;
}

/// The failover's figures, printed for the README: the delays and every answer meanwhile.
void print_failover(const Outage& outage, steady::time_point killed) {
    const auto promote_ms = std::chrono::duration_cast<std::chrono::milliseconds>(*outage.promoted - killed).count();
    const auto follow_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(*outage.followed - *outage.promoted).count();
    std::printf("SENTINEL failover: promoted %lld ms after the kill; ratelimitd answered from the new primary "
                "%lld ms after that (every thread, 20 ms polling); worst latency meanwhile %lld ms\n",
                static_cast<long long>(promote_ms), static_cast<long long>(follow_ms),
                static_cast<long long>(outage.worst.count()));
    for (const auto& [policy, outcomes] : outage.seen) {
        for (const auto& [outcome, count] : outcomes) std::printf("  %s %s: %d\n", policy.c_str(), outcome.c_str(), count);
    }
}

/// Followed within its bound, no request held much beyond the store deadline, and in between
/// each policy answered by its failure mode, and only by it or a real verdict.
void expect_failure_modes_meanwhile(Outage outage) {
    EXPECT_LT(*outage.followed - *outage.promoted, follow_bound);
    EXPECT_LT(outage.worst, latency_bound) << "no request waits much beyond the store deadline";
    auto& seen = outage.seen;
    EXPECT_GT(seen["open"]["200+degraded"], 0);
    EXPECT_GT(seen["closed"]["503+degraded"], 0);
    for (const auto& [outcome, count] : seen["open"]) EXPECT_TRUE(outcome == "200" || outcome == "200+degraded") << outcome;
    for (const auto& [outcome, count] : seen["closed"]) EXPECT_TRUE(outcome == "200" || outcome == "503+degraded") << outcome;
}

TEST(Sentinel, FailoverIsFollowedWithFailureModesMeanwhileAndExactCountsOnBothSides) {
    // No diskless-sync delay (5 s by default): the replica syncs at once.
    RedisServer primary("", {"--repl-diskless-sync-delay", "0"});
    RedisServer replica("", {"--replicaof", "127.0.0.1", std::to_string(primary.port())});
    ASSERT_TRUE(wait_until([&] {
        return replica.command({"INFO", "replication"}).find("master_link_status:up") != std::string::npos;
    }, 10s)) << "the replica never synced";

    RedisSentinel sentinel("m", primary.port());
    const std::string old_primary = "127.0.0.1:" + std::to_string(primary.port());
    const std::string new_primary = "127.0.0.1:" + std::to_string(replica.port());
    ASSERT_EQ(sentinel.master_address(), old_primary);
    // The sentinel learns of the replica from the primary's INFO; it can only promote a known one.
    ASSERT_TRUE(wait_until([&] {
        return sentinel.command({"SENTINEL", "replicas", "m"}).find(std::to_string(replica.port())) != std::string::npos;
    }, 15s)) << "the sentinel never saw the replica";

    Ratelimitd server(config, sentinel.url());
    EXPECT_NE(server.process().log().find("store=redis-sentinel://127.0.0.1:" + std::to_string(sentinel.port()) + "/m/0"),
              std::string::npos) << server.process().log();

    // Before: exact on the primary.
    EXPECT_EQ(admitted(server.port(), "open", "before"), 5);
    EXPECT_EQ(admitted(server.port(), "closed", "before"), 5);
    EXPECT_GT(primary.integer({"DBSIZE"}), 0);

    primary.kill_hard();
    const auto killed = steady::now();

    const Outage outage = ride_out_the_failover(sentinel, server.port(), new_primary, killed);
    ASSERT_TRUE(outage.promoted) << "the sentinel never promoted the replica: "
                                 << sentinel.command({"SENTINEL", "master", "m"});
    ASSERT_TRUE(outage.followed) << server.process().log();
    print_failover(outage, killed);
    expect_failure_modes_meanwhile(outage);

    // After: exact on the new primary, where the keys now live.
    EXPECT_EQ(admitted(server.port(), "open", "after"), 5);
    EXPECT_EQ(admitted(server.port(), "closed", "after"), 5);
    EXPECT_EQ(admitted(server.port(), "open", "after"), 0);
    EXPECT_NE(replica.command({"INFO", "replication"}).find("role:master"), std::string::npos);
    EXPECT_FALSE(server.process().wait_for_log("sentinel: the primary of m is " + new_primary,
        process_start_bound).empty())
        << server.process().log();
    EXPECT_TRUE(server.process().running());
}

TEST(Sentinel, ManualFailoverWithTheOldPrimaryAliveIsFollowed) {
    // SENTINEL FAILOVER with the old primary alive: ratelimitd's connections to it are open
    // and healthy, and must move anyway. (Sentinel demotes the old primary only later, when
    // its INFO shows it still thinks itself a primary; a write reaching it then meets
    // READONLY, which the last test covers.)
    RedisServer primary("", {"--repl-diskless-sync-delay", "0"});
    RedisServer replica("", {"--replicaof", "127.0.0.1", std::to_string(primary.port()),
                             "--repl-diskless-sync-delay", "0"});
    ASSERT_TRUE(wait_until([&] {
        return replica.command({"INFO", "replication"}).find("master_link_status:up") != std::string::npos;
    }, 10s));
    RedisSentinel sentinel("m", primary.port());
    ASSERT_TRUE(wait_until([&] {
        return sentinel.command({"SENTINEL", "replicas", "m"}).find(std::to_string(replica.port())) != std::string::npos;
    }, 15s));
    // Given by the environment this time.
    Ratelimitd server(config, "", {}, {"RATELIMITD_REDIS=" + sentinel.url()});
    EXPECT_NE(server.process().log().find("store=redis-sentinel://"), std::string::npos) << server.process().log();
    EXPECT_EQ(admitted(server.port(), "closed", "before"), 5);
    // Replication is asynchronous and a manual failover does not wait for it: let the replica
    // reach the primary's offset first, or the last assertion races the failover. (WAIT would
    // not do: it waits for the writes of its own connection, and a fresh one has made none.)
    const long long written = repl_offset(primary, "master_repl_offset");
    EXPECT_TRUE(wait_until([&] { return repl_offset(replica, "slave_repl_offset") >= written; }, 10s))
        << replica.command({"INFO", "replication"});

    // NOGOODSLAVE until the sentinel has heard from the replica itself: retry.
    std::string answer;
    ASSERT_TRUE(wait_until([&] { return (answer = sentinel.command({"SENTINEL", "FAILOVER", "m"})) == "OK"; }, 15s))
        << answer;
    const std::string new_primary = "127.0.0.1:" + std::to_string(replica.port());
    std::map<std::string, int> seen;  // outcome of the fail-closed policy -> count
    HttpClient client(server.port());
    bool followed = false;
    for (int n = 0; !followed && n < 2000; ++n) {
        auto r = client.post("/v1/check", json{{"policy", "closed"}, {"tenant", "during-" + std::to_string(n)}}.dump());
        ++seen[std::to_string(r.status) + (degraded(r) ? "+degraded" : "")];
        // ratelimitd's own monitor must have heard of the switch (it polls every 250 ms): until
        // then the old primary, alive and not yet demoted, still takes writes, so "every thread
        // decides" alone could pass on it, and the checks below would count there, to be lost.
        followed = sentinel.master_address() == new_primary &&
                   server.process().log().find("sentinel: the primary of m is " + new_primary) != std::string::npos &&
                   every_thread_decides(server.port());
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_TRUE(followed) << server.process().log();
    std::printf("SENTINEL manual failover: fail-closed outcomes meanwhile:");
    for (const auto& [outcome, count] : seen) std::printf(" %s=%d", outcome.c_str(), count);
    std::printf("\n");
    for (const auto& [outcome, count] : seen) {
        EXPECT_TRUE(outcome == "200" || outcome == "503+degraded") << outcome << " x" << count;
    }
    EXPECT_EQ(admitted(server.port(), "closed", "after"), 5);
    EXPECT_EQ(admitted(server.port(), "open", "after"), 5);
    EXPECT_NE(replica.command({"INFO", "replication"}).find("role:master"), std::string::npos);
    // Counts written before the switch were replicated: the old tenant is still spent.
    EXPECT_EQ(admitted(server.port(), "closed", "before"), 0);
}

TEST(Sentinel, NoSentinelAnsweringMeansFailureModesNotAHang) {
    const unsigned short nobody = free_port();
    // Given by the config file's `redis:` key this time.
    Ratelimitd server("redis: \"redis-sentinel://:hunter2secret@127.0.0.1:" + std::to_string(nobody) + "/m\"\n" +
                          config,
                      "");
    HttpClient c(server.port());
    const auto t0 = steady::now();
    auto open = c.post("/v1/check", R"({"policy":"open","tenant":"t"})");
    auto closed = c.post("/v1/check", R"({"policy":"closed","tenant":"t"})");
    EXPECT_LT(steady::now() - t0, latency_bound * 2);
    EXPECT_EQ(open.status, 200);
    EXPECT_TRUE(degraded(open));
    EXPECT_EQ(closed.status, 503);
    EXPECT_TRUE(degraded(closed));
    EXPECT_NE(server.process().log().find("no sentinel of redis-sentinel://127.0.0.1:" + std::to_string(nobody) + "/m/0"),
              std::string::npos) << server.process().log();
    EXPECT_EQ(server.process().log().find("hunter2secret"), std::string::npos) << "the password is never logged";
}

TEST(Sentinel, AReadOnlyReplicaIsAStoreFailureNotABadReply) {
    // What a demoted primary answers to a write: READONLY. Each policy answers by its
    // failure mode (not 500), as for any unavailable store.
    RedisServer primary;
    RedisServer replica("", {"--replicaof", "127.0.0.1", std::to_string(primary.port())});
    Ratelimitd server(config, replica.url());
    HttpClient c(server.port());
    auto open = c.post("/v1/check", R"({"policy":"open","tenant":"t"})");
    auto closed = c.post("/v1/check", R"({"policy":"closed","tenant":"t"})");
    EXPECT_EQ(open.status, 200);
    EXPECT_TRUE(degraded(open)) << open.body;
    EXPECT_EQ(closed.status, 503) << closed.body;
    EXPECT_FALSE(server.process().wait_for_log("is a read-only replica", process_start_bound).empty())
        << server.process().log();
}

}  // namespace
}  // namespace ratelimitd::test::sentinel_test
