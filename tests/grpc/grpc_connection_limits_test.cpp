// Issue 31 (Medium 4): neither listener starves the other. The real binary under a low
// open-file limit (ulimit -n in the child): idle h2c connections (the HTTP/2 preface and
// SETTINGS only, from a raw socket) to the gRPC address leave HTTP /v1/check answering, and
// idle HTTP connections leave gRPC calls answered; connections beyond the gRPC cap are closed
// at once, and idle ones after the handshake and idle timeouts; an old one gets GOAWAY.
#include "support/processes.hpp"
#include "support/raw_connection.hpp"
#include "support/rls_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <poll.h>
#include <sys/socket.h>

namespace ratelimitd::test::grpc_connection_limits_test {
namespace {

using namespace std::chrono_literals;

const char* const config = R"(policies:
  open:
    algorithm: fixed_window
    limit: 100000
    window: 1h
domains:
  - domain: edge
    descriptors:
      - key: k
        rate_limit: {unit: hour, requests_per_unit: 100000}
)";

// What a gRPC client sends first: the HTTP/2 connection preface and an empty SETTINGS frame.
const std::string h2c_hello = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + std::string("\0\0\0\x04\0\0\0\0\0", 9);

// ratelimitd started by `sh -c 'ulimit -n N; exec ratelimitd ...'`: the limit is the child's
// alone (soft and hard, so ratelimitd cannot raise it), and the pid is ratelimitd's.
struct LimitedServer {
    LimitedServer(int nofile, const std::vector<std::string>& extra) {
        const auto path = scratch_dir() + "/limited-" + std::to_string(free_port()) + ".yaml";
        std::ofstream(path) << config;
        std::vector<std::string> argv{"/bin/sh", "-c", "ulimit -n " + std::to_string(nofile) + " && exec \"$0\" \"$@\"",
                                      RATELIMITD_BINARY, "--config", path, "--listen", "127.0.0.1:0",
                                      "--threads", "2", "--grpc-listen", "127.0.0.1:0"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        child = Child(argv, path + ".log");
        const auto line = child.wait_for_log("listening on ", process_start_bound);
        if (line.empty()) throw std::runtime_error("ratelimitd did not start: " + child.log());
        http_port = static_cast<unsigned short>(std::stoi(line.substr(line.find(':', line.find("listening on ")) + 1)));
        grpc_port = grpc_port_from_log(child.wait_for_log("grpc listening on", process_start_bound));
    }
    // A field of the open-file warning ("grpc_cap=102"), or -1 when it was not logged.
    long logged(const std::string& field) const {
        const auto log = child.log();
        const auto at = log.find(" " + field + "=");
        return at == std::string::npos ? -1 : std::stol(log.substr(at + field.size() + 2));
    }
    std::size_t open_fds() const {
        std::size_t n = 0;
        std::error_code ec;
        for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(child.pid()) + "/fd", ec);
             !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
            ++n;
        }
        return n;
    }
    Child child;
    unsigned short http_port = 0;
    unsigned short grpc_port = 0;
};

// 200 when /v1/check answered within 3 s, 0 when it did not.
int check_status(unsigned short port) {
    try {
        RawConnection c(port);
        const std::string body = R"({"policy":"open","tenant":"t"})";
        c.send("POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body);
        return c.read_response(3s).status;
    } catch (const std::exception&) {
        return 0;
    }
}

std::size_t closed_by_server(std::vector<std::unique_ptr<RawConnection>>& conns) {
    std::size_t n = 0;
    for (auto& c : conns) n += c->closed() || c->closed_within(0ms);
    return n;
}

// The issue's reproduction: ulimit -n 300, --max-connections 200, 280 idle h2c connections.
TEST(GrpcConnectionLimits, IdleGrpcConnectionsDoNotStarveHttp) {
    LimitedServer server(300, {"--max-connections", "200"});
    std::vector<std::unique_ptr<RawConnection>> idle;
    for (int i = 0; i < 280; ++i) {
        idle.push_back(std::make_unique<RawConnection>(server.grpc_port));
        idle.back()->send(h2c_hello);
    }
    // Until the server has taken what it takes: every descriptor, or its gRPC share (the
    // rest closed at once).
    const long grpc_cap = server.logged("grpc_cap");
    wait_until([&] { return server.open_fds() >= 295 || (grpc_cap > 0 && closed_by_server(idle) >= static_cast<std::size_t>(280 - grpc_cap)); },
               10s);
    int answered = 0;
    for (int i = 0; i < 5; ++i) answered += check_status(server.http_port) == 200;
    EXPECT_EQ(answered, 5) << server.child.log().substr(0, 4000);
    // Exactly the cap stays open (no timeout is near), the others were closed at once.
    ASSERT_GT(grpc_cap, 0) << "the split is logged: " << server.child.log();
    EXPECT_LT(grpc_cap, 280);
    EXPECT_EQ(closed_by_server(idle), static_cast<std::size_t>(280 - grpc_cap));
    EXPECT_NE(server.child.log().find("grpc connection limit reached"), std::string::npos);
}

// HTTP asks for more connections than the open-file limit holds: its share leaves gRPC room.
TEST(GrpcConnectionLimits, IdleHttpConnectionsDoNotStopGrpcCalls) {
    LimitedServer server(300, {"--max-connections", "1000"});
    std::vector<std::unique_ptr<RawConnection>> idle;
    for (int i = 0; i < 400; ++i) idle.push_back(std::make_unique<RawConnection>(server.http_port));
    // Until the server has taken what it takes: every descriptor, or its HTTP share (the rest
    // answered 503 and closed).
    const long http_cap = server.logged("http_cap");
    wait_until([&] { return server.open_fds() >= 295 || (http_cap > 0 && closed_by_server(idle) >= static_cast<std::size_t>(400 - http_cap)); },
               10s);
    RlsClient client(server.grpc_port);
    RlsResponse res;
    const auto status = client.call(rls_request("edge", {Descriptor{{{"k", "v"}}, {}}}), res, 5s);
    EXPECT_TRUE(status.ok()) << status.error_code() << " " << status.error_message() << "\n"
                             << server.child.log().substr(0, 4000);
    EXPECT_EQ(res.overall_code(), RlsResponse::OK);
    EXPECT_EQ(client.health(), grpc::health::v1::HealthCheckResponse::SERVING);
    EXPECT_GT(http_cap, 0);
    EXPECT_EQ(closed_by_server(idle), static_cast<std::size_t>(400 - http_cap)) << "503 and closed";
}

TEST(GrpcConnectionLimits, HandshakeAndIdleTimeoutsCloseIdleConnections) {
    LimitedServer server(1024, {"--grpc-handshake-timeout", "500ms", "--grpc-idle-timeout", "1s"});
    RawConnection silent(server.grpc_port);  // connects and never says a word
    RawConnection idle(server.grpc_port);
    idle.send(h2c_hello);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(silent.closed_within(5s)) << "the handshake deadline";
    EXPECT_FALSE(idle.closed()) << "the preface and SETTINGS came in time";
    EXPECT_TRUE(idle.closed_within(30s)) << "the idle timeout";
    EXPECT_GE(std::chrono::steady_clock::now() - start, 1s);
    // A client that keeps its connection busy is not affected.
    RlsClient client(server.grpc_port);
    EXPECT_EQ(client.health(), grpc::health::v1::HealthCheckResponse::SERVING);
}

// True when a GOAWAY frame comes on a raw h2c connection within `timeout`.
bool goaway_within(int fd, std::chrono::milliseconds timeout) {
    constexpr int goaway = 7;
    std::string bytes;
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        char buf[4096];
        const auto n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return false;
        bytes.append(buf, static_cast<std::size_t>(n));
        for (std::size_t at = 0; at + 9 <= bytes.size();) {
            if (static_cast<unsigned char>(bytes[at + 3]) == goaway) return true;
            at += 9 + ((static_cast<unsigned char>(bytes[at]) << 16) | (static_cast<unsigned char>(bytes[at + 1]) << 8) |
                       static_cast<unsigned char>(bytes[at + 2]));
        }
    }
    return false;
}

TEST(GrpcConnectionLimits, AnOldConnectionGetsGoaway) {
    LimitedServer server(1024, {"--grpc-max-connection-age", "1s"});
    RawConnection conn(server.grpc_port);
    conn.send(h2c_hello);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(goaway_within(conn.fd(), 10s));
    EXPECT_GE(std::chrono::steady_clock::now() - start, 500ms) << "at the age, not at once";
}

TEST(GrpcConnectionLimits, SettingsAreRefusedOutOfBoundsByName) {
    for (const auto& [flag, value] : {std::pair{"--grpc-max-connections", "0"}, {"--grpc-idle-timeout", "10ms"},
                                      {"--grpc-handshake-timeout", "1h"}, {"--grpc-max-connection-age", "100ms"}}) {
        const auto path = scratch_dir() + "/limits-refused-" + std::to_string(free_port()) + ".yaml";
        std::ofstream(path) << config;
        Child child({RATELIMITD_BINARY, "--config", path, "--listen", "127.0.0.1:0", flag, value}, path + ".log");
        EXPECT_NE(child.wait(process_start_bound), 0) << flag;
        EXPECT_NE(child.log().find(std::string(flag).substr(2)), std::string::npos) << child.log();
    }
}

}  // namespace
}  // namespace ratelimitd::test::grpc_connection_limits_test
