// No request shape skips a limit through the shipped nginx config: hostile headers (control
// bytes, obs-text, oversized blocks, invalid names, duplicate or huge identity headers) in
// both RATELIMITD_DOWN modes, counting exactly what reaches the upstream; and fail-open only
// when ratelimitd really cannot answer (process gone, or silent past the timeout).
#include "support/nginx.hpp"
#include "support/processes.hpp"
#include "support/raw_connection.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

namespace ratelimitd::test::proxy_bypass_test {
namespace {

constexpr int limit = 5;
constexpr int fired = 16;

/// One hostile request shape: what the client sends besides its request line.
struct Attack {
    std::string name;
    std::string path;     ///< after the route prefix
    std::string headers;  ///< raw header lines, each ending in CRLF
    int reach;            ///< of `fired` requests, how many may reach the API: the limit, or 0 (refused)
};

std::string pad(std::size_t n, char c = 'a') { return std::string(n, c); }

std::vector<Attack> attacks() {
    return {
        {"Plain", "x", "", limit},
        {"ControlByteInUnreadHeader", "x", "X-Junk: a\x01" "b\r\n", limit},
        {"EscapeAndDelInUnreadHeader", "x", "X-Junk: \x1b[31mred\x7f\r\n", limit},
        {"ObsTextInHeaderAndUri", "caf\xc3\xa9", "X-Junk: caf\xc3\xa9 \xff\r\n", limit},
        {"OversizedUnreadHeaders", "x",
         "X-Pad-1: " + pad(7000) + "\r\nX-Pad-2: " + pad(7000) + "\r\nX-Pad-3: " + pad(7000) + "\r\n", limit},
        {"InvalidHeaderNames", "x", "X_Junk: 1\r\nX\xc3\xa9: 1\r\nX.Junk: 1\r\n", limit},
        {"DuplicateIdentityHeaders", "x", "X-Api-Key: dup-one\r\nX-Api-Key: dup-two\r\n", limit},
        {"ControlBytesInIdentityHeader", "x", "X-Api-Key: key\x01\x7f" "end\r\n", limit},
        {"ObsTextInIdentityHeader", "x", "X-Api-Key: k\xe9y\r\n", limit},
        {"LargeIdentityHeader", "x", "X-Api-Key: " + pad(7000, 'k') + "\r\n", limit},
        // Identity headers and URI over ratelimitd's 16 KiB: it answers 431, which nginx must
        // refuse in both modes (nginx itself accepts them: 8 KiB per line, 32 KiB in all).
        {"OversizedIdentityHeaders", pad(6000, 'u'),
         "X-Api-Key: " + pad(7500, 'k') + "\r\nAuthorization: Bearer " + pad(7500, 't') + "\r\n", 0},
    };
}

// One route and policy per (attack, mode), so no two tests share a budget.
std::string config_for(const std::vector<Attack>& all) {
    std::string policies = "policies:\n";
    std::string routes = "routes:\n";
    for (std::size_t i = 0; i < all.size() * 2; ++i) {
        const std::string name = "p" + std::to_string(i);
        policies += "  " + name + ": { algorithm: fixed_window, limit: " + std::to_string(limit) + ", window: 60s }\n";
        routes += "  - { path: \"/" + name + "/*\", policy: " + name + " }\n";
    }
    return "hash_secret: \"proxy-bypass-hash-secret-0123\"\n"
           "identity:\n"
           "  - { header: X-Api-Key, hash: true }\n"
           "  - { header: Authorization, hash: true }\n"
           "  - { client_ip: true }\n"
           "trusted_proxies: [\"127.0.0.2/32\"]\n" +
           policies + routes;
}

struct Outcome {
    int reached = 0;  ///< answered by the upstream ("upstream ok")
    int denied = 0;   ///< 429 from nginx's @ratelimited
    std::vector<int> other;
};

/// `fired` requests over 4 concurrent connections, each its own connection (nginx closes
/// after some errors).
Outcome fire_raw(unsigned short port, const std::string& request) {
    std::atomic<int> next{0};
    std::mutex mu;
    Outcome out;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            while (next.fetch_add(1) < fired) {
                int status = -1;
                bool upstream = false;
                try {
                    RawConnection c(port);
                    c.send(request);
                    const auto res = c.read_response(std::chrono::seconds(10));
                    status = res.status;
                    upstream = res.body == "upstream ok\n";
                } catch (const std::exception&) {
                }
                std::lock_guard lock(mu);
                if (upstream) ++out.reached;
                else if (status == 429) ++out.denied;
                else out.other.push_back(status);
            }
        });
    }
    for (auto& t : threads) t.join();
    return out;
}

class ProxyBypass : public ::testing::TestWithParam<std::tuple<std::size_t, std::string>> {
protected:
    static void SetUpTestSuite() {
        ratelimitd_ = new Ratelimitd(config_for(attacks()), "");
        open_ = new Nginx({ratelimitd_->port(), "open", "127.0.0.2"});
        closed_ = new Nginx({ratelimitd_->port(), "closed", "127.0.0.2"});
    }
    static void TearDownTestSuite() {
        delete closed_;
        delete open_;
        delete ratelimitd_;
    }
    static Ratelimitd* ratelimitd_;
    static Nginx* open_;
    static Nginx* closed_;
};

Ratelimitd* ProxyBypass::ratelimitd_ = nullptr;
Nginx* ProxyBypass::open_ = nullptr;
Nginx* ProxyBypass::closed_ = nullptr;

TEST_P(ProxyBypass, NothingReachesTheApiPastTheLimit) {
    const auto [index, mode] = GetParam();
    const Attack attack = attacks()[index];
    Nginx& nginx = mode == "open" ? *open_ : *closed_;
    const std::string route = "/p" + std::to_string(index * 2 + (mode == "open" ? 0 : 1)) + "/";
    const std::string request = "GET " + route + attack.path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
                                attack.headers + "\r\n";

    const int before = nginx.upstream_requests();
    const Outcome out = fire_raw(nginx.port(), request);
    // The upstream's own log agrees with what the clients saw (nothing reached it unseen).
    EXPECT_TRUE(wait_until([&] { return nginx.upstream_requests() - before == out.reached; },
                           std::chrono::seconds(5)))
        << nginx.upstream_requests() - before << " requests reached the upstream, clients saw " << out.reached;
    EXPECT_EQ(out.reached, attack.reach) << "mode " << mode;
    if (attack.reach == limit) {
        // Counted: the rest are ordinary denials.
        EXPECT_EQ(out.denied, fired - limit);
        EXPECT_TRUE(out.other.empty()) << out.other.size() << " answers neither upstream nor 429, first "
                                       << (out.other.empty() ? 0 : out.other.front());
    } else {
        // Refused: an error, never the API.
        for (int status : out.other) EXPECT_GE(status, 400);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ProxyBypass,
    ::testing::Combine(::testing::Range<std::size_t>(0, attacks().size()), ::testing::Values("open", "closed")),
    [](const auto& info) {
        return attacks()[std::get<0>(info.param)].name + "_" + std::get<1>(info.param);
    });

/// A port that completes TCP handshakes (the kernel's backlog) but never answers: ratelimitd
/// hung or overloaded past nginx's timeouts.
class SilentListener {
public:
    SilentListener() : port_(free_port()) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port_);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 64) != 0) {
            throw std::runtime_error("cannot listen on a silent port");
        }
    }
    ~SilentListener() { ::close(fd_); }
    SilentListener(const SilentListener&) = delete;
    SilentListener& operator=(const SilentListener&) = delete;
    unsigned short port() const { return port_; }

private:
    unsigned short port_;
    int fd_ = -1;
};

const std::string down_config = R"(
policies:
  api: { algorithm: fixed_window, limit: 2, window: 60s }
trusted_proxies: ["127.0.0.2/32"]
routes:
  - { path: "/api/*", policy: api }
)";

/// Sends `n` plain requests; returns how many the upstream answered, and the other statuses.
std::pair<int, std::vector<int>> plain_requests(Nginx& nginx, int n) {
    int reached = 0;
    std::vector<int> other;
    for (int i = 0; i < n; ++i) {
        RawConnection c(nginx.port());
        c.send("GET /api/x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        const auto res = c.read_response(std::chrono::seconds(10));
        if (res.body == "upstream ok\n") ++reached;
        else other.push_back(res.status);
    }
    return {reached, other};
}

TEST(ProxyDown, OpenServesAndClosedRefusesOnlyWhenRatelimitdCannotAnswer) {
    auto ratelimitd = std::make_unique<Ratelimitd>(down_config, "");
    Nginx open({ratelimitd->port(), "open", "127.0.0.2"});
    Nginx closed({ratelimitd->port(), "closed", "127.0.0.2"});
    // Up: both limit (one shared budget of 2: the same client address).
    EXPECT_EQ(plain_requests(open, 2).first, 2);
    EXPECT_EQ(plain_requests(closed, 2).first, 0);
    EXPECT_EQ(plain_requests(open, 2).first, 0);

    // Gone (nginx's kept-alive connections to it die too): open serves, closed refuses.
    ratelimitd->process().signal(SIGKILL);
    ratelimitd->process().wait(std::chrono::seconds(5));
    const int open_before = open.upstream_requests();
    const auto [open_reached, open_other] = plain_requests(open, 5);
    EXPECT_EQ(open_reached, 5);
    EXPECT_TRUE(open_other.empty());
    const auto [closed_reached, closed_other] = plain_requests(closed, 5);
    EXPECT_EQ(closed_reached, 0);
    EXPECT_EQ(closed_other, std::vector<int>(5, 500));
    EXPECT_TRUE(wait_until([&] { return open.upstream_requests() - open_before == 5; }, process_start_bound));
    EXPECT_EQ(closed.upstream_requests(), 0);
}

TEST(ProxyDown, ASilentRatelimitdTimesOutIntoEachMode) {
    SilentListener silent;
    Nginx open({silent.port(), "open", ""});
    Nginx closed({silent.port(), "closed", ""});
    const auto [open_reached, open_other] = plain_requests(open, 1);
    EXPECT_EQ(open_reached, 1);
    const auto [closed_reached, closed_other] = plain_requests(closed, 1);
    EXPECT_EQ(closed_reached, 0);
    EXPECT_EQ(closed_other, std::vector<int>{500});
}

}  // namespace
}  // namespace ratelimitd::test::proxy_bypass_test
