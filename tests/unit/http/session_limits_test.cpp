// The session's answers to a request it could not read whole: 431 and 413 name the limits the
// server was given, not a fixed 16 KiB; and to one whose handler threw: 500, and the
// connection serves on. A real Server on a loopback port, a blocking client.
#include "ratelimitd/http/router.hpp"
#include "ratelimitd/http/server.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "support/scripted_store.hpp"
#include "support/wait.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace ratelimitd::http {
namespace {

namespace net = boost::asio;

class SessionLimits : public ::testing::Test {
protected:
    SessionLimits()
        : registry_(std::make_shared<const policy::Registry>(
              policy::parse_config("policies:\n  p: { algorithm: fixed_window, limit: 5, window: 1m }\n",
                                   "session_limits_test.yaml")
                  .registry)),
          service_(registry_, store_, metrics_),
          router_(service_, metrics_, options_),
          lane_(ioc_, router_, metrics_) {
        ServerLimits limits;
        limits.max_header_bytes = 2048;
        limits.max_body_bytes = 1000;
        server_.emplace(ioc_, net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), 0),
                        std::vector<Lane*>{&lane_}, limits);
        server_->start();
        thread_ = std::thread([this] { ioc_.run(); });
    }
    ~SessionLimits() override {
        // Sessions end first: their frames refer to the lane.
        EXPECT_TRUE(test::wait_until([this] { return server_->live_sessions() == 0; }, test::process_start_bound));
        ioc_.stop();
        thread_.join();
    }

    /// Sends `wire` on a new connection and returns all the server sends until it closes.
    std::string exchange(const std::string& wire) {
        net::io_context client;
        net::ip::tcp::socket socket(client);
        socket.connect(server_->local_endpoint());
        net::write(socket, net::buffer(wire));
        std::string answer;
        boost::system::error_code ec;
        net::read(socket, net::dynamic_buffer(answer), ec);  // until the server closes
        return answer;
    }

    policy::RegistryHandle registry_;
    test::ScriptedStore store_;
    service::Metrics metrics_;
    service::CheckService service_;
    RouterOptions options_;
    Router router_;
    net::io_context ioc_;
    Lane lane_;
    std::optional<Server> server_;
    std::thread thread_;
};

TEST_F(SessionLimits, A431NamesTheConfiguredHeaderLimit) {
    const std::string answer =
        exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(3000, 'p') + "\r\n\r\n");
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n")) << answer;
    EXPECT_NE(answer.find(R"({"error":"header_too_large","detail":"headers: the header block is over 2 KiB"})"),
              std::string::npos)
        << answer;
}

TEST_F(SessionLimits, A413NamesTheConfiguredBodyLimit) {
    const std::string body(1500, ' ');
    const std::string answer = exchange("POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                        "Content-Length: 1500\r\n\r\n" + body);
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 413 Payload Too Large\r\n")) << answer;
    EXPECT_NE(answer.find(R"("detail":"body: larger than 1000 bytes")"), std::string::npos) << answer;
}

// The session awaits the handler in its own frame (Router::route): the router's catch-all is
// there too. The store throws on the first check only.
TEST_F(SessionLimits, AHandlerThatThrowsAnswers500AndTheConnectionServesOn) {
    store_.push(test::Scripted::raise);
    const std::string check = "GET /v1/check?policy=p&tenant=t HTTP/1.1\r\nHost: x\r\n";
    const std::string answer = exchange(check + "X-Request-Id: thrown-1\r\n\r\n" + check + "Connection: close\r\n\r\n");
    ASSERT_TRUE(answer.starts_with("HTTP/1.1 500 Internal Server Error\r\n")) << answer;
    EXPECT_NE(answer.find(R"({"error":"internal_error","detail":"the request could not be handled"})"),
              std::string::npos)
        << answer;
    const auto second = answer.find("HTTP/1.1 200 OK\r\n");
    ASSERT_NE(second, std::string::npos) << answer;
    EXPECT_NE(answer.substr(0, second).find("X-Request-Id: thrown-1\r\n"), std::string::npos) << answer;
    EXPECT_EQ(store_.calls().size(), 2u);
    const std::string metrics = metrics_.render("test", "scripted");
    EXPECT_NE(metrics.find(R"(ratelimitd_http_requests_total{route="/v1/check",status="500"} 1)"), std::string::npos)
        << metrics;
    EXPECT_NE(metrics.find("ratelimitd_requests_in_flight 0\n"), std::string::npos) << metrics;
}

}  // namespace
}  // namespace ratelimitd::http
