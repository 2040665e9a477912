// Connection hygiene against the real binary: the cap on concurrent connections (refused
// fast with 503, served ones unaffected, counted), the cap on requests per connection,
// HTTP/1.0 and pipelined HTTP/1.1.
#include "support/http_client.hpp"
#include "support/processes.hpp"
#include "support/raw_connection.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <vector>

namespace ratelimitd::test::connection_hygiene_test {
namespace {

using namespace std::chrono_literals;

const char* const config = R"(
policies:
  demo:
    algorithm: fixed_window
    limit: 100
    window: 60s
)";

const std::string healthz = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

std::string check_request(const std::string& tenant, const std::string& request_id) {
    const std::string body = R"({"policy":"demo","tenant":")" + tenant + R"("})";
    return "POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Request-Id: " +
           request_id + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

/// The value of one sample line of the exposition ("name value"), or -1.
double sample(const std::string& exposition, const std::string& series) {
    std::istringstream lines(exposition);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
    }
    return -1;
}

TEST(ConnectionCap, BeyondTheCapANewConnectionGets503AtOnceAndTheServedOnesKeepWorking) {
    constexpr int cap = 20;
    Ratelimitd server(config, "", {"--max-connections", std::to_string(cap)});

    // cap connections, each answered once, so each is surely accepted and counted.
    std::vector<RawConnection> served;
    for (int i = 0; i < cap; ++i) {
        served.emplace_back(server.port());
        ASSERT_TRUE(served.back().send(healthz));
        ASSERT_EQ(served.back().read_response(5s).status, 200) << "connection " << i;
    }

    // One more: answered and closed at once, without waiting for a request.
    const auto t0 = std::chrono::steady_clock::now();
    RawConnection extra(server.port());
    const HttpResponse refused = extra.read_response(2s);
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(refused.status, 503);
    EXPECT_EQ(refused.header("connection"), "close");
    EXPECT_EQ(refused.header("retry-after"), "1");
    EXPECT_NE(refused.body.find(R"("error":"too_many_connections")"), std::string::npos) << refused.body;
    EXPECT_NE(refused.body.find("max_connections"), std::string::npos) << refused.body;
    EXPECT_TRUE(extra.closed_within(2s));
    EXPECT_LT(took, 1s);

    // The served connections did not notice.
    for (int i = 0; i < cap; ++i) {
        ASSERT_TRUE(served[i].send(check_request("cap" + std::to_string(i), "r" + std::to_string(i))));
        const HttpResponse res = served[i].read_response(5s);
        EXPECT_EQ(res.status, 200) << res.body;
        EXPECT_EQ(res.header("x-request-id"), "r" + std::to_string(i));
    }

    // Counted, and readable over a served connection (no other may open).
    ASSERT_TRUE(served[0].send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    const HttpResponse metrics = served[0].read_response(5s);
    EXPECT_EQ(sample(metrics.body, "ratelimitd_connections_rejected_total"), 1) << metrics.body;
    EXPECT_EQ(sample(metrics.body, "ratelimitd_connections_open"), cap) << metrics.body;
    EXPECT_FALSE(server.process().wait_for_log("connection limit reached", process_start_bound).empty())
        << server.process().log();

    // A closed connection frees its slot: a new one is served again (once the server has
    // seen the close, which it does on its own time).
    served.pop_back();
    const auto until = std::chrono::steady_clock::now() + 5s;
    int status = 0;
    while (status != 200 && std::chrono::steady_clock::now() < until) {
        RawConnection again(server.port());
        try {
            again.send(healthz);
            status = again.read_response(2s).status;  // 503 while the slot is still taken
        } catch (const std::runtime_error&) {
            status = 0;  // refused before the request was read
        }
    }
    EXPECT_EQ(status, 200);
}

TEST(RequestCap, TheLastAllowedRequestIsAnsweredWithConnectionCloseAndTheSocketCloses) {
    Ratelimitd server(config, "", {"--max-requests-per-connection", "3"});
    RawConnection c(server.port());
    for (int i = 1; i <= 3; ++i) {
        ASSERT_TRUE(c.send(check_request("cap", "q" + std::to_string(i))));
        const HttpResponse res = c.read_response(5s);
        ASSERT_EQ(res.status, 200) << res.body;
        if (i < 3) {
            EXPECT_EQ(res.header("connection"), "") << "request " << i << " keeps the connection";
        } else {
            EXPECT_EQ(res.header("connection"), "close");
        }
    }
    EXPECT_TRUE(c.closed_within(2s));

    // Pipelined beyond the cap: three answers, the fourth request is never read.
    RawConnection p(server.port());
    ASSERT_TRUE(p.send(healthz + healthz + healthz + healthz));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(p.read_response(5s).status, 200);
    EXPECT_TRUE(p.closed_within(2s));
}

TEST(Http10, AnsweredAsHttp10AndClosedUnlessKeepAliveIsAsked) {
    Ratelimitd server(config, "");
    {
        RawConnection c(server.port());
        ASSERT_TRUE(c.send("GET /healthz HTTP/1.0\r\n\r\n"));
        std::string version;
        const HttpResponse res = c.read_response(5s, &version);
        EXPECT_EQ(version, "HTTP/1.0");
        EXPECT_EQ(res.status, 200);
        EXPECT_EQ(res.body, R"({"status":"ok"})");
        EXPECT_NE(res.header("connection"), "keep-alive");
        EXPECT_TRUE(c.closed_within(2s));
    }
    {
        RawConnection c(server.port());
        const std::string body = R"({"policy":"demo","tenant":"http10"})";
        const std::string check = "POST /v1/check HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: " +
                                  std::to_string(body.size()) + "\r\n\r\n" + body;
        ASSERT_TRUE(c.send(check));
        std::string version;
        const HttpResponse first = c.read_response(5s, &version);
        EXPECT_EQ(version, "HTTP/1.0");
        EXPECT_EQ(first.status, 200) << first.body;
        EXPECT_EQ(first.header("connection"), "keep-alive");
        EXPECT_EQ(first.header("x-ratelimit-remaining"), "99");
        ASSERT_TRUE(c.send(check));
        const HttpResponse second = c.read_response(5s);
        EXPECT_EQ(second.header("x-ratelimit-remaining"), "98");
        EXPECT_FALSE(c.closed_within(200ms)) << "kept alive as asked";
    }
}

TEST(Pipelining, RequestsWrittenInOneSendAreAllAnsweredInOrder) {
    Ratelimitd server(config, "");
    RawConnection c(server.port());
    ASSERT_TRUE(c.send(check_request("piped", "p1") +
                       "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: p2\r\n\r\n" +
                       "GET /v1/check?policy=demo&tenant=piped HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       "X-Request-Id: p3\r\nConnection: close\r\n\r\n"));
    const HttpResponse r1 = c.read_response(5s);
    const HttpResponse r2 = c.read_response(5s);
    const HttpResponse r3 = c.read_response(5s);
    EXPECT_EQ(r1.header("x-request-id"), "p1");
    EXPECT_EQ(r1.header("x-ratelimit-remaining"), "99");
    EXPECT_EQ(r2.header("x-request-id"), "p2");
    EXPECT_EQ(r2.body, R"({"status":"ok"})");
    EXPECT_EQ(r3.header("x-request-id"), "p3");
    EXPECT_EQ(r3.header("x-ratelimit-remaining"), "98");
    EXPECT_EQ(r3.header("connection"), "close");
    EXPECT_TRUE(c.closed_within(2s));
}

}  // namespace
}  // namespace ratelimitd::test::connection_hygiene_test
