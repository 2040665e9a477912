// Admin endpoints without a token answer only loopback peers (docs/operations.md "Admin endpoints"), the start-up
// warning for a non-loopback listener without one, and the Bearer scheme in any case, against
// the real binary (listening on 0.0.0.0, called through this machine's non-loopback address).
#include "support/http_client.hpp"
#include "support/non_loopback_address.hpp"
#include "support/one_request.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ratelimitd::test::admin_access_test {
namespace {

const std::string config = R"(
policies:
  api: { algorithm: fixed_window, limit: 10, window: 60s }
)";
const std::string token = "admin-token-for-access-tests-0123";
const std::string warning = "bound to a non-loopback address without an admin token";

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
    EXPECT_EQ(request_to(*remote, ratelimitd.port(), get_wire("/v1/check?policy=api&tenant=t1")).status, 200);
    // From loopback: served.
    for (const auto& wire : {get_wire("/v1/policies"), get_wire("/v1/peek?policy=api&tenant=t1"), reset_wire()}) {
        EXPECT_EQ(request_to("127.0.0.1", ratelimitd.port(), wire).status, 200) << wire;
    }
}

TEST(AdminAccess, WithATokenEveryPeerNeedsItAndNothingIsWarned) {
    const auto remote = non_loopback_address();
    if (!remote) GTEST_SKIP() << "this machine has no non-loopback IPv4 address to connect from";
    Ratelimitd ratelimitd(config, "", {"--listen", "0.0.0.0:0"}, {"RATELIMITD_ADMIN_TOKEN=" + token});
    EXPECT_EQ(ratelimitd.process().log().find(warning), std::string::npos);
    EXPECT_EQ(request_to(*remote, ratelimitd.port(), get_wire("/v1/policies")).status, 401);
    EXPECT_EQ(request_to("127.0.0.1", ratelimitd.port(), get_wire("/v1/policies")).status, 401);
    // The scheme in any case (RFC 9110 §11.1).
    for (const std::string scheme : {"Bearer", "bearer", "BEARER"}) {
        const std::string auth = "Authorization: " + scheme + " " + token + "\r\n";
        EXPECT_EQ(request_to(*remote, ratelimitd.port(), get_wire("/v1/policies", auth)).status, 200) << scheme;
        EXPECT_EQ(request_to(*remote, ratelimitd.port(), reset_wire(auth)).status, 200) << scheme;
    }
}

TEST(AdminAccess, OnLoopbackWithoutATokenServedAndNotWarned) {
    Ratelimitd ratelimitd(config, "");
    EXPECT_EQ(ratelimitd.process().log().find(warning), std::string::npos);
    HttpClient client(ratelimitd.port());
    EXPECT_EQ(client.get("/v1/policies").status, 200);
}

}  // namespace
}  // namespace ratelimitd::test::admin_access_test
