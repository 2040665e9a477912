// Every door of the endpoint table, walked against the real binary and a real redis-server from
// a non-loopback peer (the machine's own non-loopback address: the admin rule judges the TCP
// peer, never a header): with no token, a wrong token and the right one when a token is set,
// and without any token set. Each row is served or refused as its door says; every door that
// takes a body refuses one over 16 KiB, and every JSON door refuses a field given twice.
#include "ratelimitd/http/endpoints.hpp"
#include "support/non_loopback_address.hpp"
#include "support/one_request.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>

namespace ratelimitd::test::door_table_test {
namespace {

using http::Access;
using http::Endpoint;

const std::string config = R"(
policies:
  fw: { algorithm: fixed_window, limit: 1000, window: 10m }
  conc: { algorithm: concurrency, limit: 5, lease: 30s }
default_policy: fw
domains:
  - domain: edge
    descriptors:
      - {key: remote_address, rate_limit: {unit: day, requests_per_unit: 10}}
)";
const std::string token = "door-table-admin-token-0123456789";

/// How the test calls one door, and what a served call answers.
struct Probe {
    std::string method;
    std::string target;
    std::string body;           ///< empty: none
    int served;                 ///< the status of a call the door lets through
    bool json_body = false;     ///< the door reads `body` as JSON (duplicate keys refused)
    std::string headers;        ///< more header lines, each ending in \r\n
};

std::string wire_of(const Probe& p, const std::string& authorization, const std::string& body) {
    std::string wire = p.method + " " + p.target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + p.headers;
    if (!authorization.empty()) wire += "Authorization: " + authorization + "\r\n";
    if (p.method == "POST") {
        wire += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    }
    return wire + "\r\n" + (p.method == "POST" ? body : "");
}

const std::string lease = "0123456789abcdef0123456789abcdef";  // held by nobody

Probe get(std::string target, std::string headers = {}) {
    return {"GET", std::move(target), "", 200, false, std::move(headers)};
}
Probe post(std::string target, std::string body, bool json) {
    return {"POST", std::move(target), std::move(body), 200, json, ""};
}

// One probe per row of the endpoint table; a new door cannot pass this test without its own.
const std::map<std::string, Probe> probes = {
    {"/v1/check", post("/v1/check", R"({"policy":"fw","tenant":"door"})", true)},
    {"/v1/report", post("/v1/report", R"({"policy":"fw","tenant":"door","cost":1})", true)},
    {"/v1/auth", get("/v1/auth/x", "X-Original-URI: /x\r\nX-Original-Method: GET\r\n")},
    {"/healthz", get("/healthz")},
    {"/readyz", get("/readyz")},
    {"/metrics", get("/metrics")},
    {"/v1/policies", get("/v1/policies")},
    {"/v1/peek", get("/v1/peek?policy=fw&tenant=door")},
    {"/v1/top", get("/v1/top?policy=fw")},
    {"/v1/reset", post("/v1/reset", R"({"policy":"fw","tenant":"door"})", true)},
    {"/v1/release", post("/v1/release", R"({"policy":"conc","tenant":"door","lease":")" + lease + R"("})", true)},
    {"/", get("/")},
    {"/v1/status/history", get("/v1/status/history")},
    {"/v1/envoy/peek", get("/v1/envoy/peek?domain=edge&remote_address=192.0.2.7")},
    {"/v1/envoy/reset", post("/v1/envoy/reset?domain=edge&remote_address=192.0.2.7", "", false)},
    {"/healthcheck", get("/healthcheck")},
    // envoyproxy/ratelimit's /json is served in ERL mode only (tests/grpc/grpc_erl_mode_test.cpp):
    // here, as any other caller would, the probe finds no door.
    {"/json", {"POST", "/json", R"({"domain":"edge","descriptors":[{"entries":[{"key":"k","value":"v"}]}]})", 404,
               false, ""}},
    {"/rlconfig", get("/rlconfig")},
    {"/v1/audit", get("/v1/audit?limit=5")},
    // The config has no notify section: a served call names the unknown target (400).
    {"/v1/notify/test", {"POST", "/v1/notify/test", R"({"target":"ops"})", 400, false, ""}},
};

// A refund: the one act of /v1/report that is an operator's.
const Probe refund = post("/v1/report", R"({"policy":"fw","tenant":"door","cost":-1})", true);

const Probe& probe_of(const Endpoint& e) {
    const auto it = probes.find(std::string(e.path));
    if (it == probes.end()) throw std::runtime_error("no probe for the door " + std::string(e.path));
    return it->second;
}

/// The three callers a door with a token meets, and the status each should get.
void expect_rule_with_token(const std::string& remote, unsigned short port, const Probe& p, bool needs_admin) {
    for (const auto& [authorization, name] :
         std::map<std::string, std::string>{{"", "no token"}, {"Bearer " + token + "0", "a wrong token"},
                                            {"Bearer " + token, "the right token"}}) {
        SCOPED_TRACE(p.method + " " + p.target + " with " + name);
        const OneAnswer a = request_to(remote, port, wire_of(p, authorization, p.body));
        const bool right = authorization == "Bearer " + token;
        if (needs_admin && !right) {
            EXPECT_EQ(a.status, 401) << a.body;
            EXPECT_NE(a.body.find(R"("error":"unauthorized")"), std::string::npos) << a.body;
        } else {
            EXPECT_EQ(a.status, p.served) << a.body;
        }
    }
}

class DoorTable : public ::testing::Test {
protected:
    void SetUp() override {
        remote_ = non_loopback_address();
        if (!remote_) GTEST_SKIP() << "this machine has no non-loopback IPv4 address to connect from";
    }
    RedisServer redis_;
    std::optional<std::string> remote_;
};

TEST_F(DoorTable, WithATokenEveryDoorLetsInWhomItsRowSays) {
    Ratelimitd sidecar(config, redis_.url(), {"--listen", "0.0.0.0:0", "--store-timeout", "5s"},
                       {"RATELIMITD_ADMIN_TOKEN=" + token});
    for (const Endpoint& e : http::endpoint_table()) {
        SCOPED_TRACE(std::string(e.path));
        const Probe& p = probe_of(e);
        expect_rule_with_token(*remote_, sidecar.port(), p, e.door.who == Access::admin);
        if (e.door.who == Access::admin_to_give_back) expect_rule_with_token(*remote_, sidecar.port(), refund, true);
    }
    // A release of a lease that is not held answers no state: the tenant's numbers are for
    // the lease holder and the admin peek.
    const Probe& unheld = probes.at("/v1/release");
    const OneAnswer release = request_to(*remote_, sidecar.port(), wire_of(unheld, "", unheld.body));
    EXPECT_NE(release.body.find(R"("released":false)"), std::string::npos) << release.body;
    EXPECT_EQ(release.body.find("remaining"), std::string::npos) << release.body;
    EXPECT_EQ(release.body.find("limit"), std::string::npos) << release.body;
}

TEST_F(DoorTable, WithoutATokenTheOperatorsDoorsAreShutToANonLoopbackPeer) {
    Ratelimitd sidecar(config, redis_.url(), {"--listen", "0.0.0.0:0", "--store-timeout", "5s"});
    const auto expect_shut = [&](const Probe& p) {
        for (const std::string& authorization : {std::string(), "Bearer " + token}) {
            SCOPED_TRACE(p.method + " " + p.target + " with authorization '" + authorization + "'");
            const OneAnswer a = request_to(*remote_, sidecar.port(), wire_of(p, authorization, p.body));
            EXPECT_EQ(a.status, 403) << a.body;
            EXPECT_NE(a.body.find(R"("error":"admin_disabled")"), std::string::npos) << a.body;
            EXPECT_NE(a.body.find("RATELIMITD_ADMIN_TOKEN"), std::string::npos) << a.body;
        }
    };
    for (const Endpoint& e : http::endpoint_table()) {
        SCOPED_TRACE(std::string(e.path));
        const Probe& p = probe_of(e);
        switch (e.door.who) {
        case Access::admin:
        case Access::admin_page: expect_shut(p); break;
        case Access::admin_to_give_back:
            expect_shut(refund);
            EXPECT_EQ(request_to(*remote_, sidecar.port(), wire_of(p, "", p.body)).status, p.served);
            break;
        case Access::anyone:
        case Access::lease_holder:
            EXPECT_EQ(request_to(*remote_, sidecar.port(), wire_of(p, "", p.body)).status, p.served);
            break;
        }
    }
    // From loopback, the same refund is served.
    EXPECT_EQ(request_to("127.0.0.1", sidecar.port(), wire_of(refund, "", refund.body)).status, 200);
}

TEST_F(DoorTable, EveryBodyIsBoundedAndEveryJsonDoorRefusesAFieldGivenTwice) {
    Ratelimitd sidecar(config, redis_.url(), {"--listen", "0.0.0.0:0", "--store-timeout", "5s"},
                       {"RATELIMITD_ADMIN_TOKEN=" + token});
    const std::string authorization = "Bearer " + token;
    int json_doors = 0;
    for (const Endpoint& e : http::endpoint_table()) {
        SCOPED_TRACE(std::string(e.path));
        const Probe& p = probe_of(e);
        if (p.method != "POST") continue;
        const std::string padded = p.body.empty() ? std::string(17 * 1024, ' ')
                                                  : p.body.substr(0, p.body.size() - 1) +
                                                        R"(,"pad":")" + std::string(17 * 1024, 'x') + "\"}";
        const OneAnswer big = request_to(*remote_, sidecar.port(), wire_of(p, authorization, padded));
        EXPECT_EQ(big.status, 413) << big.body;
        if (!p.json_body) continue;
        ++json_doors;
        // "tenant" twice: a reader keeping the last one would charge (or free) someone else.
        const std::string twice = p.body.substr(0, p.body.size() - 1) + R"(,"tenant":"other"})";
        const OneAnswer dup = request_to(*remote_, sidecar.port(), wire_of(p, authorization, twice));
        EXPECT_EQ(dup.status, 400) << dup.body;
        EXPECT_NE(dup.body.find("tenant: given more than once"), std::string::npos) << dup.body;
    }
    EXPECT_EQ(json_doors, 4);  // check, report, reset, release
    // Every body was refused: nothing was charged, freed or written.
    EXPECT_EQ(redis_.command({"DBSIZE"}), "0");
}

}  // namespace
}  // namespace ratelimitd::test::door_table_test
