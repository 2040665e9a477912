// Who may call the admin endpoints: the token when one is set, else loopback peers only.
#include "ratelimitd/http/admin_endpoints.hpp"
#include "ratelimitd/http/loopback.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace ratelimitd::http {
namespace {

const std::string token = "admin-token-0123456789";

TEST(Loopback, OnlyThisHostsOwnAddresses) {
    for (const char* yes : {"127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "::ffff:127.0.0.1",
                            "0:0:0:0:0:0:0:1", "::FFFF:127.1.2.3"}) {
        EXPECT_TRUE(is_loopback_address(yes)) << yes;
    }
    for (const char* no : {"192.0.2.2", "10.0.0.1", "0.0.0.0", "::", "fd00::2", "fe80::1", "::ffff:10.0.0.1",
                           "::127.0.0.1", "128.0.0.1", "", "localhost", "127.0.0.1x", " 127.0.0.1"}) {
        EXPECT_FALSE(is_loopback_address(no)) << no;
    }
}

TEST(AdminAccess, WithoutATokenOnlyLoopbackPeers) {
    EXPECT_EQ(admin_access(std::nullopt, "", "127.0.0.1"), AdminAccess::allowed);
    EXPECT_EQ(admin_access(std::nullopt, "", "::1"), AdminAccess::allowed);
    EXPECT_EQ(admin_access(std::nullopt, "", "::ffff:127.0.0.1"), AdminAccess::allowed);
    EXPECT_EQ(admin_access(std::nullopt, "", "192.0.2.2"), AdminAccess::disabled);
    EXPECT_EQ(admin_access(std::nullopt, "Bearer anything-at-all-here", "10.1.2.3"), AdminAccess::disabled);
    EXPECT_EQ(admin_access(std::nullopt, "", ""), AdminAccess::disabled);  // peer unknown
}

TEST(AdminAccess, WithATokenItIsNeededFromEveryPeer) {
    EXPECT_EQ(admin_access(token, "Bearer " + token, "192.0.2.2"), AdminAccess::allowed);
    EXPECT_EQ(admin_access(token, "", "127.0.0.1"), AdminAccess::unauthorized);
    EXPECT_EQ(admin_access(token, "Bearer wrong", "127.0.0.1"), AdminAccess::unauthorized);
}

TEST(BearerMatches, TheSchemeIsCaseInsensitive) {
    for (const std::string scheme : {"Bearer", "bearer", "BEARER", "bEaReR"}) {
        EXPECT_TRUE(bearer_matches(scheme + " " + token, token)) << scheme;
    }
    EXPECT_TRUE(bearer_matches("Bearer   " + token, token));  // 1*SP
}

TEST(BearerMatches, AnythingElseFails) {
    const std::vector<std::string> wrongs = {
        std::string{}, "Bearer", "Bearer ", token, "Basic " + token, "Bearer" + token, "Bearer\t" + token,
        "Bearer " + token + "x", "Bearer " + token.substr(1), "Bearer " + token + " ", "Bearers " + token,
        "Bearer " + std::string(token.size(), 'a'), "XBearer " + token};
    for (const auto& wrong : wrongs) {
        EXPECT_FALSE(bearer_matches(wrong, token)) << wrong;
    }
}

}  // namespace
}  // namespace ratelimitd::http
