// What the simulate tests share: generated logs, the real binary run on them, and the oracle:
// the server's own /v1/auth handler (http::Router) on an embedded store with a manual clock.
#pragma once

#include "ratelimitd/http/router.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/service/check_service.hpp"
#include "ratelimitd/service/metrics.hpp"
#include "ratelimitd/store/memory/memory_store.hpp"
#include "support/manual_clock.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/run_on_io.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace ratelimitd::test {

using namespace std::chrono_literals;

/// One logged request.
struct Event {
    std::int64_t t_ms = 0;
    std::string client;
    std::string method = "GET";
    std::string uri = "/";
    std::string tenant;  ///< X-Tenant-Id, "" when not sent
};

/// Epoch ms of a UTC date and time.
inline std::int64_t utc_ms(int y, unsigned mo, unsigned d, int h, int mi, int s) {
    using namespace std::chrono;
    const sys_days date{year{y} / month{mo} / std::chrono::day{d}};
    return duration_cast<milliseconds>((date + hours{h} + minutes{mi} + seconds{s}).time_since_epoch()).count();
}

/// nginx's $time_local in UTC: "01/Dec/2026:12:00:00 +0000".
inline std::string time_local(std::int64_t ms) {
    const std::time_t t = ms / 1000;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char out[40];
    std::strftime(out, sizeof out, "%d/%b/%Y:%H:%M:%S +0000", &tm);
    return out;
}

/// The log_format the tests write when they log a tenant header: combined plus X-Tenant-Id.
inline const std::string tenant_format =
    R"($remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$http_x_tenant_id")";

/// One line in the combined format (with the tenant header appended when `with_tenant`).
inline std::string nginx_line(const Event& e, bool with_tenant = false) {
    std::string line = e.client + " - - [" + time_local(e.t_ms) + "] \"" + e.method + " " + e.uri +
                       " HTTP/1.1\" 200 12 \"-\" \"sim-test/1.0\"";
    if (with_tenant) line += " \"" + (e.tenant.empty() ? std::string("-") : e.tenant) + "\"";
    return line + "\n";
}

inline std::string write_file(const std::string& name, const std::string& text) {
    const std::string path = scratch_dir() + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

inline std::string read_file(const std::string& path) {
    std::ostringstream out;
    out << std::ifstream(path, std::ios::binary).rdbuf();
    return out.str();
}

/// The binary's exit code, stdout and stderr.
struct SimRun {
    int code = -1;
    std::string out;
    std::string err;
    /// stdout as JSON (a test failure, and null, when it is not).
    nlohmann::json json() const {
        auto j = nlohmann::json::parse(out, nullptr, false);
        EXPECT_FALSE(j.is_discarded()) << out << err;
        return j;
    }
};

/// Runs `ratelimitd simulate ARGS` through the shell (`args` is shell text: quote what needs it).
inline SimRun simulate(const std::string& args, const std::string& stdin_from = "") {
    static int n = 0;
    const std::string base = scratch_dir() + "/sim-" + std::to_string(++n);
    std::string command = std::string(RATELIMITD_BINARY) + " simulate " + args + " >" + base + ".out 2>" + base + ".err";
    if (!stdin_from.empty()) command += " <" + stdin_from;
    Child child({"/bin/sh", "-c", command}, base + ".log");
    SimRun r;
    r.code = child.wait(90s);
    r.out = read_file(base + ".out");
    r.err = read_file(base + ".err");
    return r;
}

/// The server's /v1/auth handler (the Router of every server thread) on an embedded store
/// whose clock the test sets: what the running server would answer to each logged request
/// arriving at its logged time. (The binary has no manual clock; this is the same code in
/// process.)
class ServerOracle {
public:
    explicit ServerOracle(const std::string& yaml)
        : registry_(std::make_shared<const policy::Registry>(policy::parse_config(yaml, "oracle.yaml").registry)),
          store_(clock_),
          service_(registry_, store_, metrics_),
          router_(service_, metrics_, options_) {}

    /// The status /v1/auth answers (200 or 429) to `e`, at max(its time, the clock).
    unsigned auth(const Event& e) {
        clock_.set(std::max(clock_.now_ms(), e.t_ms));
        http::Request req{boost::beast::http::verb::get, "/v1/auth", 11};
        req.set("X-Original-Method", e.method);
        req.set("X-Original-URI", e.uri);
        if (!e.tenant.empty()) req.set("X-Tenant-Id", e.tenant);
        return run_on_io(router_.handle(std::move(req), http::RequestContext{e.client})).to_response().result_int();
    }

    /// Checks of `policy` (every verdict) and its denials (shadow ones included), as /metrics counts them.
    std::pair<double, double> checked_denied(const std::string& policy) const {
        const std::string text = metrics_.render("0", "embedded");
        const auto count = [&](const char* verdict) {
            const double v = sample(text, "ratelimitd_checks_total{policy=\"" + policy + "\",verdict=\"" + verdict + "\"}");
            return v < 0 ? 0.0 : v;
        };
        const double denied = count("denied") + count("shadow_denied");
        return {count("allowed") + denied, denied};
    }

private:
    policy::RegistryHandle registry_;
    testing::ManualClock clock_{0};
    store::memory::MemoryStore store_;
    service::Metrics metrics_;
    service::CheckService service_;
    http::RouterOptions options_;
    http::Router router_;
};

/// Feeds every event to the oracle; returns how many it denied.
inline int replay_on_server(ServerOracle& server, const std::vector<Event>& events) {
    int denied = 0;
    for (const auto& e : events) denied += server.auth(e) == 429;
    return denied;
}

/// Each policy of `summary` (simulate's JSON) has the checks and denials the server counted.
inline void expect_same_as_server(const nlohmann::json& summary, const ServerOracle& server) {
    ASSERT_TRUE(summary.contains("policies")) << summary.dump();
    for (const auto& [policy, totals] : summary["policies"].items()) {
        const auto [checked, denied] = server.checked_denied(policy);
        EXPECT_EQ(totals["checked"].get<double>(), checked) << policy;
        EXPECT_EQ(totals["denied"].get<double>(), denied) << policy;
    }
}

}  // namespace ratelimitd::test
