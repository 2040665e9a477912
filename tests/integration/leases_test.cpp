// Concurrency limits against the real binary, on Redis and on the embedded store: exact
// admission of 64 racing acquirers, the lease in body and header, /v1/release freeing exactly
// one slot, a killed holder's slot coming back when its lease expires, and layered routes.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace ratelimitd::test::leases_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::string config() {
    return R"(
prefix: rl
policies:
  exports: { algorithm: concurrency, limit: 5, lease: 10m }
  quick: { algorithm: concurrency, limit: 2, lease: 1500ms }
  jobs: { algorithm: concurrency, limit: 3, lease: 10m }
  hourly: { algorithm: fixed_window, limit: 2, window: 1h }
routes:
  - { path: /layered, limits: [ { policy: jobs }, { policy: hourly } ] }
)";
}

struct Deployment {
    std::unique_ptr<RedisServer> redis;  // null for the embedded store
    std::unique_ptr<Ratelimitd> server;
};

Deployment& deployment(const std::string& store) {
    static std::map<std::string, Deployment> all;
    auto& d = all[store];
    if (!d.server) {
        if (store == "redis") d.redis = std::make_unique<RedisServer>();
        d.server = std::make_unique<Ratelimitd>(config(), d.redis ? d.redis->url() : "");
    }
    return d;
}

/// What one racing acquirer got back.
struct Acquired {
    int status = 0;
    std::string body_lease;
    std::string header_lease;
    std::int64_t remaining = -1;
};

class Leases : public ::testing::TestWithParam<std::string> {
protected:
    unsigned short port() { return deployment(GetParam()).server->port(); }
    std::string tenant(const std::string& name) { return name + "-" + GetParam(); }

    json body(const std::string& policy, const std::string& who) {
        return {{"policy", policy}, {"tenant", who}, {"scope", "export"}};
    }

    /// `n` checks started together from `n` threads (each its own connection).
    std::vector<Acquired> race(int n, const json& request) {
        std::vector<Acquired> out(static_cast<std::size_t>(n));
        const unsigned short to = port();  // the deployment is made here, not by 64 threads at once
        std::latch start(n);
        std::vector<std::thread> threads;
        for (int i = 0; i < n; ++i) {
            threads.emplace_back([&, i] {
                HttpClient c(to);
                start.arrive_and_wait();
                const auto res = c.post("/v1/check", request.dump());
                Acquired& a = out[static_cast<std::size_t>(i)];
                a.status = res.status;
                a.header_lease = res.header("x-ratelimit-lease");
                const auto parsed = json::parse(res.body, nullptr, false);
                if (parsed.is_object() && parsed.contains("lease")) a.body_lease = parsed["lease"];
                if (parsed.is_object() && parsed.contains("remaining")) a.remaining = parsed["remaining"];
            });
        }
        for (auto& t : threads) t.join();
        return out;
    }

    HttpResponse release(const json& request, const std::string& lease) {
        json b = request;
        b["lease"] = lease;
        HttpClient c(port());
        return c.post("/v1/release", b.dump());
    }
};

TEST_P(Leases, SixtyFourRacingAcquirersAdmitExactlyTheLimitEachWithItsOwnLease) {
    const json req = body("exports", tenant("racers"));
    const auto all = race(64, req);
    std::set<std::string> leases;
    std::multiset<std::int64_t> remaining;
    int denied = 0;
    for (const auto& a : all) {
        if (a.status == 200) {
            EXPECT_EQ(a.body_lease, a.header_lease);
            EXPECT_EQ(a.body_lease.size(), 32u) << "128 random bits in hex";
            leases.insert(a.body_lease);
            remaining.insert(a.remaining);
        } else {
            EXPECT_EQ(a.status, 429);
            EXPECT_TRUE(a.body_lease.empty() && a.header_lease.empty()) << "a denial holds no lease";
            ++denied;
        }
    }
    EXPECT_EQ(leases.size(), 5u) << "exactly `limit` admitted, each with a distinct lease";
    EXPECT_EQ(denied, 59);
    EXPECT_EQ(remaining, (std::multiset<std::int64_t>{0, 1, 2, 3, 4})) << "remaining = limit - held";

    // Releasing one lease frees exactly one slot: another race of 64 admits one.
    const auto freed = release(req, *leases.begin());
    ASSERT_EQ(freed.status, 200) << freed.body;
    const auto state = json::parse(freed.body);
    EXPECT_EQ(state["released"], true);
    EXPECT_EQ(state["remaining"], 1);
    EXPECT_EQ(freed.header("x-ratelimit-remaining"), "1");
    EXPECT_TRUE(freed.header("retry-after").empty());
    const auto again = race(64, req);
    int admitted = 0;
    for (const auto& a : again) admitted += a.status == 200 ? 1 : 0;
    EXPECT_EQ(admitted, 1);
}

TEST_P(Leases, ReleasingAnUnknownOrReleasedLeaseChangesNothing) {
    const json req = body("exports", tenant("unknown"));
    HttpClient c(port());
    const auto first = c.post("/v1/check", req.dump());
    ASSERT_EQ(first.status, 200);
    const std::string lease = json::parse(first.body)["lease"];
    ASSERT_TRUE(json::parse(release(req, lease).body)["released"].get<bool>());
    // The same lease again, or one never issued: 200, released false, and none of the
    // tenant's state (that is for the lease holder and the admin peek).
    for (const std::string& other : {lease, std::string(32, 'a')}) {
        const auto res = release(req, other);
        ASSERT_EQ(res.status, 200) << res.body;
        const auto b = json::parse(res.body);
        EXPECT_EQ(b["released"], false);
        EXPECT_FALSE(b.contains("remaining")) << res.body;
        EXPECT_FALSE(b.contains("limit")) << res.body;
        EXPECT_EQ(res.header("x-ratelimit-remaining"), "") << res.body;
    }
    // A malformed lease, or a policy that holds no leases: 400, and nothing echoed.
    const auto bad = release(req, "../../etc/passwd");
    EXPECT_EQ(bad.status, 400);
    EXPECT_EQ(bad.body.find("passwd"), std::string::npos) << bad.body;
    const auto wrong = release(body("hourly", tenant("unknown")), std::string(32, 'b'));
    EXPECT_EQ(wrong.status, 400);
    EXPECT_NE(wrong.body.find("concurrency"), std::string::npos) << wrong.body;
    // A lease is one slot: cost 2 is refused with a clear 400.
    json costly = req;
    costly["cost"] = 2;
    const auto refused = c.post("/v1/check", costly.dump());
    EXPECT_EQ(refused.status, 400);
    EXPECT_EQ(json::parse(refused.body)["error"], "invalid_cost");
}

TEST_P(Leases, AKilledHoldersSlotComesBackWhenItsLeaseExpires) {
    const json req = body("quick", tenant("killed"));
    // Two worker processes take both slots and are killed before they release. The first
    // lease is taken after `started`, so no slot may come back before started + 1.5 s.
    const auto started = std::chrono::steady_clock::now();
    std::vector<pid_t> workers;
    const unsigned short to = port();
    for (int i = 0; i < 2; ++i) {
        int ready[2];
        ASSERT_EQ(::pipe(ready), 0);
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::close(ready[0]);
            HttpClient c(to);
            const char ok = c.post("/v1/check", req.dump()).status == 200 ? 'y' : 'n';
            (void)!::write(ready[1], &ok, 1);
            ::pause();  // holds its lease until killed
            ::_exit(0);
        }
        ::close(ready[1]);
        char got = 0;
        ASSERT_EQ(::read(ready[0], &got, 1), 1);
        ::close(ready[0]);
        EXPECT_EQ(got, 'y');
        workers.push_back(pid);
    }
    for (pid_t pid : workers) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
    HttpClient c(port());
    const auto denied = c.post("/v1/check", req.dump());
    ASSERT_EQ(denied.status, 429);
    const std::string retry = denied.header("retry-after");
    EXPECT_TRUE(retry == "1" || retry == "2") << "when the oldest lease expires (within 1.5 s): " << retry;
    // Awaited, not slept: the slots come back once the leases expire, not before.
    ASSERT_TRUE(wait_until([&] { return c.post("/v1/check", req.dump()).status == 200; }, 10s));
    EXPECT_GE(std::chrono::steady_clock::now() - started, 1450ms) << "a slot came back before its lease ended";
}

TEST_P(Leases, ADeniedLayeredCheckHoldsNothing) {
    const std::string who = tenant("layered");
    HttpClient c(port());
    const json req = {{"tenant", who}, {"method", "POST"}, {"path", "/layered"}};
    // The route decides both limits as one check (lua/multi.lua; in memory, decide_all).
    std::vector<std::string> leases;
    for (int i = 0; i < 2; ++i) {
        const auto res = c.post("/v1/check", req.dump());
        ASSERT_EQ(res.status, 200) << res.body;
        leases.push_back(json::parse(res.body)["lease"]);
        EXPECT_EQ(res.header("x-ratelimit-lease"), leases.back());
    }
    // The hourly limit (2) denies the third: the jobs limit must not hold a slot for it.
    const auto third = c.post("/v1/check", req.dump());
    ASSERT_EQ(third.status, 429) << third.body;
    EXPECT_TRUE(third.header("x-ratelimit-lease").empty());
    const auto freed = c.post("/v1/release", json{{"policy", "jobs"}, {"tenant", who}, {"lease", leases[0]}}.dump());
    ASSERT_EQ(freed.status, 200) << freed.body;
    EXPECT_EQ(json::parse(freed.body)["remaining"], 2) << "3 - 1 held: the denied check held nothing";
}

INSTANTIATE_TEST_SUITE_P(Stores, Leases, ::testing::Values("redis", "embedded"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ratelimitd::test::leases_test
