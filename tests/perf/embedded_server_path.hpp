// The real server on one thread over the embedded store, as the perf tests drive it: accept,
// session, Router, CheckService (with this thread's heavy hitters, on by default in the
// binary) and MemoryStore, over a loopback socket. Each perf test counts something its own
// executable interposes, on the server's thread only (on_server_thread marks it).
#pragma once

#include "ratelimitd/core/clock.hpp"
#include "ratelimitd/http/router.hpp"
#include "ratelimitd/http/server.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/service/check_service.hpp"
#include "ratelimitd/service/top_board.hpp"
#include "ratelimitd/store/memory/memory_store.hpp"
#include "support/raw_connection.hpp"
#include "support/wait.hpp"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::http::perf {

using namespace std::chrono_literals;

// roomy refills slowly (a token every 86 ms): its buckets stay in the store for the whole
// test. One that refilled within a millisecond was full again, so dropped, between two checks
// of a tenant on a slow (sanitized) build, and each check then counted a new entry and key.
// The routes are /v1/auth's: a proxy's subrequest for /roomy/... or /tight/..., its tenant the
// X-Api-Key header.
inline constexpr const char* embedded_config = R"(policies:
  roomy: { algorithm: token_bucket, limit: 1000000, window: 24h }
  tight: { algorithm: token_bucket, limit: 1, window: 60s }
routes:
  - { path: "/roomy/*", policy: roomy }
  - { path: "/tight/*", policy: tight }
identity:
  - { name: api_key, header: X-Api-Key }
)";

/// The server on one thread (accept and the one lane share its io_context). `on_server_thread`
/// runs first on that thread; `with_top`: the thread keeps heavy hitters, as the binary does.
class EmbeddedServerPath {
public:
    EmbeddedServerPath(void (*on_server_thread)(), bool with_top)
        : registry_(std::make_shared<const policy::Registry>(
              policy::parse_config(embedded_config, "perf_test.yaml").registry)),
          store_(clock_),
          ioc_(std::make_unique<boost::asio::io_context>()),
          top_board_(service::TopOptions{}),
          service_(registry_, store_, metrics_, with_top ? &top_board_.add_thread(ioc_->get_executor()) : nullptr),
          router_(service_, metrics_, options_),
          lane_(std::make_unique<Lane>(*ioc_, router_, metrics_)) {
        server_ = std::make_unique<Server>(*ioc_, boost::asio::ip::tcp::endpoint(
                                                      boost::asio::ip::make_address("127.0.0.1"), 0),
                                           std::vector<Lane*>{lane_.get()}, ServerLimits{});
        server_->start();
        thread_ = std::thread([this, on_server_thread] {
            on_server_thread();
            ioc_->run();
        });
    }

    ~EmbeddedServerPath() {
        // Sessions end first (their frames refer to the lane), then the io_context goes.
        test::wait_until([this] { return server_->live_sessions() == 0; }, 5s);
        ioc_->stop();
        thread_.join();
        server_.reset();
        ioc_.reset();
    }

    EmbeddedServerPath(const EmbeddedServerPath&) = delete;
    EmbeddedServerPath& operator=(const EmbeddedServerPath&) = delete;

    unsigned short port() const { return server_->local_endpoint().port(); }

    static std::string check_wire(std::string_view policy, std::string_view tenant) {
        const std::string body =
            R"({"policy":")" + std::string(policy) + R"(","tenant":")" + std::string(tenant) + "\"}";
        return "POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body;
    }

    /// A reverse proxy's auth subrequest for `uri`, on behalf of `tenant` (its API key).
    static std::string auth_wire(std::string_view uri, std::string_view tenant) {
        return "GET /v1/auth HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Original-URI: " + std::string(uri) +
               "\r\nX-Original-Method: GET\r\nX-Api-Key: " + std::string(tenant) + "\r\n\r\n";
    }

    /// `counter`'s growth per check over `n` checks on one keep-alive connection, after a
    /// warm-up that creates the tenants' buckets and the session's buffers. Every answer must
    /// be `expected_status`.
    double per_check(const std::function<std::uint64_t()>& counter, std::string_view policy, int tenants, int n,
                     unsigned expected_status) {
        std::vector<std::string> wires;
        for (int t = 0; t < tenants; ++t) wires.push_back(check_wire(policy, "t" + std::to_string(t)));
        return per_request(counter, wires, n, expected_status);
    }

    /// The same for /v1/auth: subrequests for /<policy>/x, the tenants' keys rotating.
    double per_auth(const std::function<std::uint64_t()>& counter, std::string_view policy, int tenants, int n,
                    unsigned expected_status) {
        std::vector<std::string> wires;
        for (int t = 0; t < tenants; ++t) {
            wires.push_back(auth_wire("/" + std::string(policy) + "/x", "t" + std::to_string(t)));
        }
        return per_request(counter, wires, n, expected_status);
    }

    /// `counter`'s growth per request over `n` requests (`wires` in turn) on one keep-alive
    /// connection, after a warm-up of four rounds of them.
    double per_request(const std::function<std::uint64_t()>& counter, const std::vector<std::string>& wires, int n,
                       unsigned expected_status) {
        test::RawConnection c(port());
        const int tenants = static_cast<int>(wires.size());
        auto one = [&](int i) {
            EXPECT_TRUE(c.send(wires[static_cast<std::size_t>(i % tenants)]));
            return c.read_response(5s).status;
        };
        for (int i = 0; i < 4 * tenants; ++i) one(i);  // a tight tenant's first check is allowed
        const auto before = counter();
        for (int i = 0; i < n; ++i) EXPECT_EQ(one(i), static_cast<int>(expected_status));
        const auto after = counter();
        return static_cast<double>(after - before) / n;
    }

private:
    SystemClock clock_;
    policy::RegistryHandle registry_;
    store::memory::MemoryStore store_;
    service::Metrics metrics_;
    std::unique_ptr<boost::asio::io_context> ioc_;
    service::TopBoard top_board_;
    service::CheckService service_;
    RouterOptions options_;
    Router router_;
    std::unique_ptr<Lane> lane_;
    std::unique_ptr<Server> server_;
    std::thread thread_;
};

}  // namespace ratelimitd::http::perf
