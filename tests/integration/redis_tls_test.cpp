// rediss:// against a real redis-server with --tls-port and certificates made for this run:
// exact admission over TLS, client certificates, and each way verification must refuse a
// server (wrong CA, expired, another name) answered by on_store_error, with the reason logged.
#include "support/http_client.hpp"
#include "support/load.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/sentinel.hpp"
#include "support/tls_certs.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/stat.h>

namespace ratelimitd::test::redis_tls_test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const char* const config = R"(
store_timeout: 200ms
policies:
  exact:
    algorithm: sliding_log
    limit: 20
    window: 60s
  open:
    algorithm: fixed_window
    limit: 1000
    window: 60s
    on_store_error: allow
  closed:
    algorithm: fixed_window
    limit: 1000
    window: 60s
    on_store_error: deny
)";

const TlsCerts& certs() {
    static const TlsCerts c;
    return c;
}

/// A redis-server whose TLS port serves `cert`; its plain port stays for the test's own checks.
struct TlsRedis {
    explicit TlsRedis(const CertFiles& cert, bool require_client_cert = false)
        : tls_port(free_port()), server("", certs().redis_args(tls_port, cert, require_client_cert)) {}
    std::string url() const { return "rediss://127.0.0.1:" + std::to_string(tls_port); }
    unsigned short tls_port;
    RedisServer server;
};

std::vector<std::string> with_ca(std::vector<std::string> more = {}) {
    more.insert(more.begin(), {"--redis-tls-ca", certs().ca()});
    return more;
}

HttpResponse check(HttpClient& c, const std::string& policy, const std::string& tenant = "t1") {
    return c.post("/v1/check", json{{"policy", policy}, {"tenant", tenant}}.dump());
}

/// The store never answered: fail open says degraded, fail closed says 503.
void expect_store_failure(Ratelimitd& rl) {
    HttpClient c(rl.port());
    const auto open = check(c, "open");
    EXPECT_EQ(open.status, 200);
    EXPECT_NE(open.body.find("\"degraded\":true"), std::string::npos) << open.body;
    EXPECT_EQ(check(c, "closed").status, 503);
}

TEST(RedisTls, ExactAdmissionUnderConcurrency) {
    TlsRedis redis(certs().server());
    Ratelimitd rl(config, redis.url(), with_ca());
    auto tally = fire(rl.port(), 60, 16, [](HttpClient& c) { return check(c, "exact"); });
    EXPECT_EQ(tally.allowed, 20);
    EXPECT_EQ(tally.denied, 40);
    EXPECT_EQ(tally.other, 0);
    EXPECT_FALSE(redis.server.keys().empty()) << "the counters live in this Redis, reached over TLS only";
    EXPECT_NE(rl.process().log().find("connected to rediss://127.0.0.1:" + std::to_string(redis.tls_port)),
              std::string::npos) << rl.process().log();
}

TEST(RedisTls, ClientCertificateAccepted) {
    TlsRedis redis(certs().server(), /*require_client_cert=*/true);
    Ratelimitd rl(config, redis.url(),
                  with_ca({"--redis-tls-cert", certs().client().cert, "--redis-tls-key", certs().client().key}));
    HttpClient c(rl.port());
    const auto res = check(c, "closed");
    EXPECT_EQ(res.status, 200) << res.body;
    EXPECT_EQ(res.body.find("degraded"), std::string::npos) << res.body;
}

TEST(RedisTls, MissingClientCertificateIsAStoreFailure) {
    TlsRedis redis(certs().server(), /*require_client_cert=*/true);
    Ratelimitd rl(config, redis.url(), with_ca());
    expect_store_failure(rl);
    EXPECT_NE(rl.process().wait_for_log("certificate required", process_start_bound), "") << rl.process().log();
}

TEST(RedisTls, ClientKeyNeverLogged) {
    TlsRedis redis(certs().server(), /*require_client_cert=*/true);
    // The key of another pair: refused before any connection, naming the files, not their content.
    Ratelimitd rl(config, redis.url(),
                  with_ca({"--redis-tls-cert", certs().client().cert, "--redis-tls-key", certs().server().key}));
    expect_store_failure(rl);
    EXPECT_NE(rl.process().wait_for_log("client key " + certs().server().key, process_start_bound), "")
        << rl.process().log();
    EXPECT_EQ(rl.process().log().find("PRIVATE KEY"), std::string::npos);
}

TEST(RedisTls, WrongCaIsAStoreFailureNamingTheReason) {
    TlsRedis redis(certs().server());
    // Redis sends its CA along, which the other CA does not trust: refused as self-signed.
    Ratelimitd rl(config, redis.url(), {"--redis-tls-ca", certs().other_ca()});
    expect_store_failure(rl);
    EXPECT_NE(rl.process().wait_for_log("certificate was refused: self-signed certificate in certificate chain",
        process_start_bound), "") << rl.process().log();
}

TEST(RedisTls, SystemStoreDoesNotTrustATestCa) {
    TlsRedis redis(certs().server());
    Ratelimitd rl(config, redis.url());  // no redis_tls_ca: the system's CAs
    expect_store_failure(rl);
    EXPECT_NE(rl.process().wait_for_log("the server's certificate was refused", process_start_bound), "")
        << rl.process().log();
}

TEST(RedisTls, ExpiredCertificateIsAStoreFailure) {
    TlsRedis redis(certs().expired_server());
    Ratelimitd rl(config, redis.url(), with_ca());
    expect_store_failure(rl);
    EXPECT_NE(rl.process().wait_for_log("certificate has expired", process_start_bound), "") << rl.process().log();
}

TEST(RedisTls, HostNameMismatchIsAStoreFailure) {
    TlsRedis redis(certs().named_server());  // only DNS:redis.test
    Ratelimitd rl(config, redis.url(), with_ca());
    expect_store_failure(rl);
    EXPECT_NE(rl.process().wait_for_log("IP address mismatch", process_start_bound), "") << rl.process().log();
}

TEST(RedisTls, ServerNameSettingFixesTheMismatch) {
    TlsRedis redis(certs().named_server());
    Ratelimitd rl(config, redis.url(), with_ca({"--redis-tls-server-name", "redis.test"}));
    auto tally = fire(rl.port(), 30, 8, [](HttpClient& c) { return check(c, "exact", "named"); });
    EXPECT_EQ(tally.allowed, 20);
    EXPECT_EQ(tally.denied, 10);
}

TEST(RedisTls, ServerNameFromTheEnvironment) {
    TlsRedis redis(certs().named_server());
    Ratelimitd rl(config, redis.url(), {},
                  {"RATELIMITD_REDIS_TLS_CA=" + certs().ca(), "RATELIMITD_REDIS_TLS_SERVER_NAME=redis.test"});
    HttpClient c(rl.port());
    EXPECT_EQ(check(c, "closed").status, 200);
}

TEST(RedisTls, InsecureSkipVerifyConnectsAndWarns) {
    TlsRedis redis(certs().expired_server());
    Ratelimitd rl(config, redis.url(), {"--redis-tls-insecure-skip-verify", "on"});
    HttpClient c(rl.port());
    EXPECT_EQ(check(c, "closed").status, 200);
    EXPECT_NE(rl.process().wait_for_log("does not verify the server's certificate", process_start_bound), "")
        << rl.process().log();
}

TEST(RedisTls, PlainRedisUrlToATlsPortIsAStoreFailure) {
    TlsRedis redis(certs().server());
    Ratelimitd rl(config, "redis://127.0.0.1:" + std::to_string(redis.tls_port));
    expect_store_failure(rl);
}

// Issue 45 item 3: the client key emptied on disk (a Secret truncated and not yet written)
// while Redis restarts. Every reconnect reads the files again; the empty key is refused, the
// last good context connects, and the refusal is counted. Before, every reconnect failed until
// the key came back: a store outage made by a file.
TEST(RedisTls, AClientKeyEmptiedOnDiskKeepsTheLastGoodOneAcrossReconnects) {
    TlsRedis redis(certs().server(), /*require_client_cert=*/true);
    const auto key = scratch_dir() + "/redis-client-" + std::to_string(redis.tls_port) + ".key";
    std::filesystem::copy_file(certs().client().key, key, std::filesystem::copy_options::overwrite_existing);
    Ratelimitd rl(config, redis.url(), with_ca({"--redis-tls-cert", certs().client().cert, "--redis-tls-key", key}));
    HttpClient c(rl.port());
    ASSERT_EQ(check(c, "closed").status, 200) << rl.process().log();
    std::ofstream(key, std::ios::trunc).flush();  // `: > tls.key`
    redis.server.kill_hard();
    redis.server.restart();
    const auto served = [&] {
        HttpClient probe(rl.port());
        const auto res = check(probe, "closed", "probe");
        return res.status == 200 && res.body.find("degraded") == std::string::npos;
    };
    EXPECT_TRUE(wait_until(served, 10s, 100ms)) << rl.process().log();
    EXPECT_GE(sample(c.get("/metrics").body, "ratelimitd_tls_reload_total{outcome=\"refused\"}"), 1);
    EXPECT_NE(rl.process().log().find("redis TLS: cannot use the client key " + key), std::string::npos)
        << rl.process().log();
}

TEST(RedisTls, RedisRestartedUnderLoadIsUsedAgainOverTls) {
    TlsRedis redis(certs().server());
    Ratelimitd rl(config, redis.url(), with_ca());
    std::atomic<bool> stop{false};
    std::atomic<int> sent{0}, unanswered{0};
    std::vector<std::thread> load;
    for (int i = 0; i < 4; ++i) {
        load.emplace_back([&, i] {
            HttpClient c(rl.port());
            while (!stop) {
                ++sent;
                if (check(c, i % 2 ? "open" : "closed", "load").status == 0) ++unanswered;
            }
        });
    }
    std::this_thread::sleep_for(200ms);  // load before the fault, as in faults_test
    redis.server.kill_hard();
    std::this_thread::sleep_for(300ms);
    redis.server.restart();
    // Back on every server thread: each one's connections and breaker recover on their own, and
    // fresh connections are spread over the threads, so eight in a row reach each of them.
    const bool back = wait_until(
        [&] {
            for (int probe = 0; probe < 8; ++probe) {
                HttpClient c(rl.port());
                const auto res = check(c, "closed", "probe");
                if (res.status != 200 || res.body.find("degraded") != std::string::npos) return false;
            }
            return true;
        },
        5s);
    stop = true;
    for (auto& t : load) t.join();
    ASSERT_TRUE(back) << rl.process().log();
    EXPECT_GT(sent.load(), 0);
    EXPECT_EQ(unanswered.load(), 0) << "every request gets an answer while Redis is away";
    auto tally = fire(rl.port(), 30, 8, [](HttpClient& c) { return check(c, "exact", "after-restart"); });
    EXPECT_EQ(tally.allowed, 20);
    EXPECT_EQ(tally.denied, 10);
}

TEST(RedisTls, AResetOnOneSidecarReachesTheOthersDenialCacheOverTls) {
    TlsRedis redis(certs().server());
    const std::string token = "redis-tls-admin-token";
    const std::string fleet_config = "policies:\n  fw: {algorithm: fixed_window, limit: 3, window: 600s}\n";
    Ratelimitd a(fleet_config, redis.url(), with_ca(), {"RATELIMITD_ADMIN_TOKEN=" + token});
    Ratelimitd b(fleet_config, redis.url(), with_ca(), {"RATELIMITD_ADMIN_TOKEN=" + token});
    // The reset subscribers connect over TLS too (the plain port is the test's only).
    ASSERT_TRUE(wait_until([&] { return redis.server.command({"PUBSUB", "NUMSUB", "rl:resets"}) == "rl:resets 2"; },
        process_start_bound))
        << redis.server.command({"PUBSUB", "NUMSUB", "rl:resets"});
    HttpClient ca(a.port());
    for (int i = 0; i < 3; ++i) ASSERT_EQ(check(ca, "fw", "reset-me").status, 200);
    ASSERT_EQ(check(ca, "fw", "reset-me").status, 429);  // now cached on a
    HttpClient admin(b.port());
    ASSERT_EQ(admin.post("/v1/reset", json{{"policy", "fw"}, {"tenant", "reset-me"}}.dump(),
                         {{"Authorization", "Bearer " + token}})
                  .status,
              200);
    EXPECT_TRUE(wait_until([&] { return check(ca, "fw", "reset-me").status == 200; }, process_start_bound, 5ms))
        << "a's cached denial was not cleared by the reset published on b";
}

TEST(RedisTls, SentinelAndThePrimaryItNamesBothOverTls) {
    TlsRedis primary(certs().server());
    const unsigned short plain_port = free_port();  // the test's own questions
    const unsigned short tls_port = free_port();
    const std::string conf = scratch_dir() + "/sentinel-tls-" + std::to_string(tls_port) + ".conf";
    std::ofstream(conf) << "port " << plain_port << "\nbind 127.0.0.1\ntls-port " << tls_port << "\ntls-cert-file "
                        << certs().server().cert << "\ntls-key-file " << certs().server().key
                        << "\ntls-ca-cert-file " << certs().ca()
                        << "\ntls-auth-clients no\ntls-replication yes\nsentinel monitor tlsmaster 127.0.0.1 "
                        << primary.tls_port << " 1\n";
    Child sentinel({"redis-server", conf, "--sentinel"}, conf + ".log");
    const std::string named = "127.0.0.1 " + std::to_string(primary.tls_port);
    ASSERT_TRUE(wait_until(
        [&] { return redis_command(plain_port, {"SENTINEL", "get-master-addr-by-name", "tlsmaster"}) == named; },
            process_start_bound))
        << sentinel.log();
    Ratelimitd rl(config, "rediss-sentinel://127.0.0.1:" + std::to_string(tls_port) + "/tlsmaster", with_ca());
    auto tally = fire(rl.port(), 30, 8, [](HttpClient& c) { return check(c, "exact", "behind-sentinel"); });
    EXPECT_EQ(tally.allowed, 20);
    EXPECT_EQ(tally.denied, 10);
    EXPECT_NE(rl.process().log().find("the primary of tlsmaster is 127.0.0.1:" + std::to_string(primary.tls_port)),
              std::string::npos) << rl.process().log();
}

/// Three cluster primaries with TLS on their client ports and on the cluster bus; created
/// with redis-cli over TLS, so CLUSTER SLOTS names the TLS ports to a TLS client.
struct TlsCluster {
    TlsCluster() {
        const std::string dir = scratch_dir() + "/tls-cluster-" + std::to_string(free_port());
        ::mkdir(dir.c_str(), 0755);
        std::vector<std::string> create{"redis-cli", "--tls", "--cacert", certs().ca(), "--cluster", "create"};
        for (int i = 0; i < 3; ++i) {
            const std::string p = std::to_string(plain.emplace_back(free_port()));
            const auto tls = tls_ports.emplace_back(free_port());
            // An explicit bus port: port + 10000 may be taken by another test's server.
            std::vector<std::string> argv{"redis-server", "--port", p, "--cluster-port", std::to_string(free_port()),
                                          "--bind", "127.0.0.1", "--cluster-enabled", "yes", "--cluster-config-file",
                                          dir + "/nodes-" + p + ".conf", "--save", "", "--appendonly", "no", "--dir",
                                          dir, "--tls-cluster", "yes"};
            const auto tls_args = certs().redis_args(tls, certs().server());
            argv.insert(argv.end(), tls_args.begin(), tls_args.end());
            nodes.emplace_back(argv, dir + "/redis-" + p + ".log");
            create.push_back("127.0.0.1:" + std::to_string(tls));
        }
        for (auto port : plain) {
            if (!wait_until([&] { return redis_command(port, {"PING"}) == "PONG"; }, 10s)) {
                throw std::runtime_error("a TLS cluster node did not start");
            }
        }
        create.push_back("--cluster-yes");
        Child cli(create, dir + "/create.log");
        if (cli.wait(30s) != 0) throw std::runtime_error("redis-cli --cluster create over TLS failed: " + cli.log());
        const bool ok = wait_until(
            [&] {
                for (auto port : plain) {
                    if (redis_command(port, {"CLUSTER", "INFO"}).find("cluster_state:ok") == std::string::npos) {
                        return false;
                    }
                }
                return true;
            },
            20s);
        if (!ok) throw std::runtime_error("the TLS cluster did not become ok");
    }
    std::string url() const {
        std::string out = "rediss-cluster://";
        for (size_t i = 0; i < tls_ports.size(); ++i) out += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(tls_ports[i]);
        return out;
    }
    std::vector<unsigned short> plain, tls_ports;
    std::vector<Child> nodes;
};

TEST(RedisTls, ClusterDiscoveredAndUsedOverTls) {
    TlsCluster cluster;
    Ratelimitd rl(config, cluster.url(), with_ca());
    ASSERT_NE(rl.process().log().find("(3 primaries)"), std::string::npos) << rl.process().log();
    for (const std::string tenant : {"alpha", "bravo", "charlie", "delta"}) {
        auto tally = fire(rl.port(), 30, 8, [&](HttpClient& c) { return check(c, "exact", tenant); });
        EXPECT_EQ(tally.allowed, 20) << tenant;
        EXPECT_EQ(tally.denied, 10) << tenant;
    }
}

}  // namespace
}  // namespace ratelimitd::test::redis_tls_test
