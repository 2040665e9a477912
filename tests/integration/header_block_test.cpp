// What ratelimitd does with header bytes its parser would refuse, the 16 KiB limit on the
// whole header block, and Expect: 100-continue in any case — against the real binary.
#include "support/processes.hpp"
#include "support/raw_connection.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::test::header_block_test {
namespace {

const std::string config = R"(
policies:
  api: { algorithm: fixed_window, limit: 100, window: 60s }
identity:
  - { header: X-Api-Key, hash: true }
routes:
  - { path: "/api/*", policy: api }
)";

HttpResponse send_one(unsigned short port, const std::string& wire) {
    RawConnection c(port);
    c.send(wire);
    return c.read_response(std::chrono::seconds(5));
}

std::string auth_wire(const std::string& extra) {
    return "GET /v1/auth HTTP/1.1\r\nHost: x\r\nX-Original-URI: /api/x\r\n" + extra + "\r\n";
}

class HeaderBlock : public ::testing::Test {
protected:
    static void SetUpTestSuite() { ratelimitd_ = new Ratelimitd(config, ""); }
    static void TearDownTestSuite() { delete ratelimitd_; }
    static unsigned short port() { return ratelimitd_->port(); }
    static Ratelimitd* ratelimitd_;
};

Ratelimitd* HeaderBlock::ratelimitd_ = nullptr;

TEST_F(HeaderBlock, ControlBytesAndInvalidNamesInUnreadHeadersDoNotRefuseTheRequest) {
    // Each of these was a 400 from the parser: through a fail-open proxy, a way past the limit.
    for (const std::string extra : {"X-Junk: a\x01" "b\r\n", "X-Junk: \x1b[0m\x7f\r\n", "X Junk: 1\r\n",
                                    "X(Junk): 1\r\n", "X\xc3\xa9: 1\r\n", ": no name\r\n"}) {
        const auto res = send_one(port(), auth_wire(extra));
        EXPECT_EQ(res.status, 200) << extra << res.body;
        EXPECT_EQ(res.header("x-ratelimit-limit"), "100") << extra;  // counted
    }
}

TEST_F(HeaderBlock, AnIdentityHeaderWithControlBytesCountsAsTheValueWithSpaces) {
    const auto bad = send_one(port(), auth_wire("X-Api-Key: same\x01key\r\n"));
    ASSERT_EQ(bad.status, 200);
    EXPECT_EQ(bad.header("x-ratelimit-remaining"), "99");
    const auto spaced = send_one(port(), auth_wire("X-Api-Key: same key\r\n"));
    EXPECT_EQ(spaced.header("x-ratelimit-remaining"), "98");  // one tenant
}

TEST_F(HeaderBlock, ABlockOver16KiBOfMediumHeadersGets431WithoutAReset) {
    // No single header is large: the limit is on the whole block.
    std::string extra;
    for (int i = 0; i < 5; ++i) extra += "X-Pad-" + std::to_string(i) + ": " + std::string(4000, 'p') + "\r\n";
    RawConnection c(port());
    c.send(auth_wire(extra));
    const auto res = c.read_response(std::chrono::seconds(5));  // read whole: no reset before it
    EXPECT_EQ(res.status, 431);
    // Under the limit, the same shape is served.
    EXPECT_EQ(send_one(port(), auth_wire(extra.substr(0, 3 * 4011))).status, 200);
}

TEST(ExpectContinue, TheExpectationIsCaseInsensitive) {
    Ratelimitd ratelimitd(config, "");
    for (const std::string expect : {"100-continue", "100-Continue", "100-CONTINUE"}) {
        RawConnection c(ratelimitd.port());
        const std::string body = R"({"policy":"api","tenant":"expect"})";
        ASSERT_TRUE(c.send("POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: " +
                           expect + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n"));
        // The interim answer comes before any body byte is sent.
        const auto interim = c.read_response(std::chrono::seconds(2));
        EXPECT_EQ(interim.status, 100) << expect;
        ASSERT_TRUE(c.send(body));
        EXPECT_EQ(c.read_response(std::chrono::seconds(5)).status, 200) << expect;
    }
}

}  // namespace
}  // namespace ratelimitd::test::header_block_test
