// Admin endpoints without a token answer only loopback peers (CONTRACT §8), the start-up
// warning for a non-loopback listener without one, and the Bearer scheme in any case, against
// the real binary (listening on 0.0.0.0, called through this machine's non-loopback address).
#include "support/http_client.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <optional>

namespace ratelimitd::test {
namespace {

const std::string config = R"(
policies:
  api: { algorithm: fixed_window, limit: 10, window: 60s }
)";
const std::string token = "admin-token-for-access-tests-0123";
const std::string warning = "bound to a non-loopback address without an admin token";

/// An IPv4 address of this machine that is not loopback (eth0's), if it has one.
std::optional<std::string> non_loopback_address() {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return std::nullopt;
    std::optional<std::string> found;
    for (ifaddrs* it = list; it != nullptr && !found; it = it->ifa_next) {
        if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET) continue;
        const auto* in = reinterpret_cast<const sockaddr_in*>(it->ifa_addr);
        if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
        char text[INET_ADDRSTRLEN];
        found = ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    }
    ::freeifaddrs(list);
    return found;
}

/// One request over a fresh connection to `address`:`port` (HttpClient only speaks to
/// 127.0.0.1); the status and the body, read to the close.
std::pair<int, std::string> request_to(const std::string& address, unsigned short port, const std::string& wire) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    ::inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        throw std::runtime_error("cannot connect to " + address);
    }
    ::send(fd, wire.data(), wire.size(), MSG_NOSIGNAL);
    std::string got;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    if (got.size() < 12) throw std::runtime_error("no response from " + address);
    const auto body_at = got.find("\r\n\r\n");
    return {std::stoi(got.substr(9, 3)), body_at == std::string::npos ? "" : got.substr(body_at + 4)};
}

std::string get_wire(const std::string& target, const std::string& extra = "") {
    return "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + extra + "\r\n";
}

std::string reset_wire(const std::string& extra = "") {
    const std::string body = R"({"policy":"api","tenant":"t1"})";
    return "POST /v1/reset HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
           "Content-Length: " + std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

TEST(AdminAccess, WithoutATokenOnlyLoopbackPeersAndAWarningAtStart) {
    const auto remote = non_loopback_address();
    if (!remote) GTEST_SKIP() << "this machine has no non-loopback IPv4 address to connect from";
    Ratelimitd ratelimitd(config, "", {"--listen", "0.0.0.0:0"});
    EXPECT_NE(ratelimitd.process().log().find(warning), std::string::npos) << ratelimitd.process().log();

    // From the machine's own eth0 address: the peer is not loopback.
    for (const auto& wire : {get_wire("/v1/policies"), get_wire("/v1/peek?policy=api&tenant=t1"), reset_wire()}) {
        const auto [status, body] = request_to(*remote, ratelimitd.port(), wire);
        EXPECT_EQ(status, 403) << wire;
        EXPECT_NE(body.find(R"("error":"admin_disabled")"), std::string::npos) << body;
        EXPECT_NE(body.find("RATELIMITD_ADMIN_TOKEN"), std::string::npos) << body;
    }
    // Checks are not admin: they answer anyone who reaches the port.
    EXPECT_EQ(request_to(*remote, ratelimitd.port(), get_wire("/v1/check?policy=api&tenant=t1")).first, 200);
    // From loopback: served.
    for (const auto& wire : {get_wire("/v1/policies"), get_wire("/v1/peek?policy=api&tenant=t1"), reset_wire()}) {
        EXPECT_EQ(request_to("127.0.0.1", ratelimitd.port(), wire).first, 200) << wire;
    }
}

TEST(AdminAccess, WithATokenEveryPeerNeedsItAndNothingIsWarned) {
    const auto remote = non_loopback_address();
    if (!remote) GTEST_SKIP() << "this machine has no non-loopback IPv4 address to connect from";
    Ratelimitd ratelimitd(config, "", {"--listen", "0.0.0.0:0"}, {"RATELIMITD_ADMIN_TOKEN=" + token});
    EXPECT_EQ(ratelimitd.process().log().find(warning), std::string::npos);
    EXPECT_EQ(request_to(*remote, ratelimitd.port(), get_wire("/v1/policies")).first, 401);
    EXPECT_EQ(request_to("127.0.0.1", ratelimitd.port(), get_wire("/v1/policies")).first, 401);
    // The scheme in any case (RFC 9110 §11.1).
    for (const std::string scheme : {"Bearer", "bearer", "BEARER"}) {
        const std::string auth = "Authorization: " + scheme + " " + token + "\r\n";
        EXPECT_EQ(request_to(*remote, ratelimitd.port(), get_wire("/v1/policies", auth)).first, 200) << scheme;
        EXPECT_EQ(request_to(*remote, ratelimitd.port(), reset_wire(auth)).first, 200) << scheme;
    }
}

TEST(AdminAccess, OnLoopbackWithoutATokenServedAndNotWarned) {
    Ratelimitd ratelimitd(config, "");
    EXPECT_EQ(ratelimitd.process().log().find(warning), std::string::npos);
    HttpClient client(ratelimitd.port());
    EXPECT_EQ(client.get("/v1/policies").status, 200);
}

}  // namespace
}  // namespace ratelimitd::test
