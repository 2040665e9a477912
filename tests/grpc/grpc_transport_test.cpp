// The gRPC server as Envoy meets it, against the real binary and a real redis-server: the
// grpc_listen setting (flag, variable, file, refusals, off by default), grpc.health.v1 with
// Redis stopped and started, messages too large or malformed answered with an error and
// nothing charged, its series on /metrics, and a clean stop on SIGTERM.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <fstream>

namespace ratelimitd::test::grpc_transport_test {
namespace {

using namespace std::chrono_literals;
using Serving = grpc::health::v1::HealthCheckResponse;

const char* config = R"(policies:
  open:
    algorithm: fixed_window
    limit: 5
    window: 60s
)";

const std::vector<std::string> grpc_any_port{"--grpc-listen", "127.0.0.1:0"};

unsigned short grpc_port(Ratelimitd& server) {
    const auto line = server.process().wait_for_log("grpc listening on", process_start_bound);
    return grpc_port_from_log(line);
}

TEST(GrpcTransport, FlagPortZeroPicksAFreePortAndSaysWhich) {
    Ratelimitd server(config, "", grpc_any_port);
    const auto port = grpc_port(server);
    ASSERT_NE(port, 0) << server.process().log();
    EXPECT_NE(port, server.port());
    EXPECT_EQ(RlsClient(port).health(), Serving::SERVING);
}

TEST(GrpcTransport, EnvironmentAndFileSetItToo) {
    Ratelimitd by_env(config, "", {}, {"RATELIMITD_GRPC_LISTEN=127.0.0.1:0"});
    EXPECT_NE(grpc_port(by_env), 0) << by_env.process().log();
    Ratelimitd by_file(std::string(config) + "grpc_listen: 127.0.0.1:0\n", "");
    EXPECT_NE(grpc_port(by_file), 0) << by_file.process().log();
}

TEST(GrpcTransport, FlagWinsOverTheFile) {
    const auto port = free_port();
    Ratelimitd server(std::string(config) + "grpc_listen: 127.0.0.1:0\n", "",
                      {"--grpc-listen", "127.0.0.1:" + std::to_string(port)});
    EXPECT_EQ(grpc_port(server), port);
}

TEST(GrpcTransport, OffByDefault) {
    Ratelimitd server(config, "");
    HttpClient c(server.port());
    ASSERT_EQ(c.get("/healthz").status, 200);  // started and serving HTTP
    EXPECT_EQ(server.process().log().find("grpc listening"), std::string::npos);
    EXPECT_EQ(c.get("/metrics").body.find("ratelimitd_grpc_requests_total"), std::string::npos);
}

// Runs the binary with `args` (a config given) and returns its exit code and log.
std::pair<int, std::string> run_refused(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    const auto dir = scratch_dir();
    const auto path = dir + "/grpc-refused-" + std::to_string(free_port()) + ".yaml";
    std::ofstream(path) << config;
    std::vector<std::string> argv{RATELIMITD_BINARY, "--config", path, "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), args.begin(), args.end());
    Child child(argv, path + ".log", env);
    const int code = child.wait(process_start_bound);
    return {code, child.log()};
}

TEST(GrpcTransport, BadValuesAreRefusedByName) {
    for (const std::string bad : {"nonsense", "127.0.0.1:99999", ":80", "127.0.0.1:"}) {
        const auto [code, log] = run_refused({"--grpc-listen", bad});
        EXPECT_NE(code, 0) << bad;
        EXPECT_NE(log.find("grpc-listen"), std::string::npos) << bad << ": " << log;
        EXPECT_EQ(log.find("grpc listening"), std::string::npos);
    }
    const auto [code, log] = run_refused({}, {"RATELIMITD_GRPC_LISTEN=nonsense"});
    EXPECT_NE(code, 0);
    EXPECT_NE(log.find("grpc-listen: expected HOST:PORT"), std::string::npos) << log;
}

TEST(GrpcTransport, ATakenPortIsRefusedNamingTheAddress) {
    Ratelimitd first(config, "", grpc_any_port);
    const auto port = grpc_port(first);
    ASSERT_NE(port, 0);
    const auto [code, log] = run_refused({"--grpc-listen", "127.0.0.1:" + std::to_string(port)});
    EXPECT_NE(code, 0);
    EXPECT_NE(log.find("cannot listen on 127.0.0.1:" + std::to_string(port)), std::string::npos) << log;
}

TEST(GrpcTransport, HealthFollowsTheStore) {
    RedisServer redis;
    Ratelimitd server(config, redis.url(), grpc_any_port);
    RlsClient client(grpc_port(server));
    ASSERT_TRUE(wait_until([&] { return client.health() == Serving::SERVING; }, 10s));
    EXPECT_EQ(client.health("envoy.service.ratelimit.v3.RateLimitService"), Serving::SERVING);
    EXPECT_EQ(client.health("no.such.Service"), std::nullopt) << "NOT_FOUND, as the health protocol says";

    redis.kill_hard();
    EXPECT_TRUE(wait_until([&] { return client.health() == Serving::NOT_SERVING; }, 10s));
    redis.restart();
    EXPECT_TRUE(wait_until([&] { return client.health() == Serving::SERVING; }, 15s));
}

TEST(GrpcTransport, OversizedMessageIsRefusedAndChargesNothing) {
    RedisServer redis;
    Ratelimitd server(config, redis.url(), grpc_any_port);
    RlsClient client(grpc_port(server));
    // Within the codec's limits per field, but 4.7 MiB in all: above the 4 MiB receive cap.
    std::vector<Descriptor> many;
    for (int i = 0; i < 60; ++i) many.push_back({{{"k", std::string(80'000, 'x')}, {"j", std::string(200, 'y')}}, {}});
    RlsResponse res;
    const auto status = client.call(rls_request("edge", many), res);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
    EXPECT_TRUE(redis.keys().empty());
    EXPECT_EQ(client.health(), Serving::SERVING) << "the server still serves";
}

TEST(GrpcTransport, InvalidRequestsAnswerInvalidArgumentNamingTheField) {
    RedisServer redis;
    Ratelimitd server(config, redis.url(), grpc_any_port);
    RlsClient client(grpc_port(server));
    RlsResponse res;
    auto status = client.call(rls_request("", {{{{"k", "v"}}, {}}}), res);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("domain: empty"), std::string::npos) << status.error_message();
    status = client.call(rls_request("edge", {}), res);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("descriptors: empty"), std::string::npos);
    status = client.call(rls_request("edge", {{{{"", "v"}}, {}}}), res);
    EXPECT_NE(status.error_message().find("descriptors[0].entries[0].key: empty"), std::string::npos);
    EXPECT_TRUE(redis.keys().empty());

    HttpClient http(server.port());
    const auto metrics = http.get("/metrics").body;
    EXPECT_NE(metrics.find("ratelimitd_grpc_requests_total{method=\"ShouldRateLimit\",code=\"INVALID_ARGUMENT\"} 3"),
              std::string::npos)
        << metrics;
    EXPECT_NE(metrics.find("ratelimitd_grpc_request_duration_seconds_count"), std::string::npos);
}

TEST(GrpcTransport, SigtermStopsBothServersCleanly) {
    Ratelimitd server(config, "", grpc_any_port);
    RlsClient client(grpc_port(server));
    ASSERT_EQ(client.health(), Serving::SERVING);
    server.process().signal(SIGTERM);
    EXPECT_EQ(server.process().wait(process_start_bound), 0) << server.process().log();
    EXPECT_EQ(client.health(), std::nullopt);
}

}  // namespace
}  // namespace ratelimitd::test::grpc_transport_test
