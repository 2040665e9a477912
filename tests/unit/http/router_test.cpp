// The Router's decisions on a local io_context with a scripted store: the endpoint table
// (every path x method, 404, 405 with Allow), admin access, request ids, route labels in
// metrics, the check and readiness answers.
#include "ratelimitd/http/router.hpp"

#include "ratelimitd/http/endpoints.hpp"

#include "ratelimitd/policy/registry_loader.hpp"
#include "support/run_on_io.hpp"
#include "support/scripted_store.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::http {
namespace {

class RouterTest : public ::testing::Test {
protected:
    RouterTest()
        : registry_(std::make_shared<const policy::Registry>(policy::parse_config(
              "policies:\n  login: { algorithm: fixed_window, limit: 5, window: 1m }\n", "router_test.yaml")
                                                                 .registry)),
          service_(registry_, store_, metrics_),
          router_(service_, metrics_, options_) {}

    Response send(bhttp::verb method, std::string target, std::string body = {}) {
        Request req{method, target, 11};
        req.body() = std::move(body);
        req.prepare_payload();
        return test::run_on_io(router_.handle(std::move(req), RequestContext{"127.0.0.1"})).to_response();
    }

    Response send_admin(bhttp::verb method, std::string target, std::string_view authorization,
                        std::string peer = "127.0.0.1") {
        Request req{method, target, 11};
        if (!authorization.empty()) req.set(bhttp::field::authorization, authorization);
        if (method == bhttp::verb::post) req.body() = R"({"policy":"login","tenant":"t1"})";
        req.prepare_payload();
        return test::run_on_io(router_.handle(std::move(req), RequestContext{std::move(peer)})).to_response();
    }

    /// The value of one ratelimitd_http_requests_total series, 0 when absent.
    std::string http_count(std::string_view route, unsigned status) const {
        const std::string series = "ratelimitd_http_requests_total{route=\"" + std::string(route) +
                                   "\",status=\"" + std::to_string(status) + "\"} ";
        const std::string text = metrics_.render("0", "scripted");
        const auto at = text.find(series);
        if (at == std::string::npos) return "0";
        const auto start = at + series.size();
        return text.substr(start, text.find('\n', start) - start);
    }

    policy::RegistryHandle registry_;
    test::ScriptedStore store_;
    service::Metrics metrics_;
    service::CheckService service_;
    RouterOptions options_;
    Router router_;
};

TEST_F(RouterTest, EachKnownPathAnswersItsMethodsAndNamesThemInAllowOtherwise) {
    struct Row {
        const char* path;
        bhttp::verb wrong;
        const char* allow;
    };
    const Row rows[] = {
        {"/v1/check", bhttp::verb::put, "GET, POST"},
        {"/healthz", bhttp::verb::post, "GET"},
        {"/readyz", bhttp::verb::delete_, "GET"},
        {"/metrics", bhttp::verb::post, "GET"},
    };
    for (const Row& row : rows) {
        SCOPED_TRACE(row.path);
        auto res = send(row.wrong, row.path);
        EXPECT_EQ(res.result_int(), 405u);
        EXPECT_EQ(res[bhttp::field::allow], row.allow);
        EXPECT_NE(res.body().find("\"method_not_allowed\""), std::string::npos);
    }
    EXPECT_EQ(send(bhttp::verb::get, "/healthz").result_int(), 200u);
    EXPECT_EQ(send(bhttp::verb::get, "/metrics").result_int(), 200u);
}

TEST_F(RouterTest, AnUnknownPathIs404AndNeverReachesTheStore) {
    // "/" is the status page (issue 24); a path below it is not.
    for (const char* path : {"/index.html", "/v1/checks", "/v2/check", "/healthz/", "/v1/check/extra"}) {
        SCOPED_TRACE(path);
        auto res = send(bhttp::verb::get, path);
        EXPECT_EQ(res.result_int(), 404u);
        EXPECT_NE(res.body().find("\"not_found\""), std::string::npos);
    }
    EXPECT_TRUE(store_.calls().empty());
}

TEST_F(RouterTest, ASaneCallerRequestIdIsEchoedAndAnyOtherIsReplaced) {
    Request req{bhttp::verb::get, "/healthz", 11};
    req.set("X-Request-Id", "abc-123_x.y:z");
    auto echoed = test::run_on_io(router_.handle(req, {})).to_response();
    EXPECT_EQ(echoed["X-Request-Id"], "abc-123_x.y:z");

    req.set("X-Request-Id", "evil\"id with spaces");
    auto replaced = test::run_on_io(router_.handle(req, {})).to_response();
    const std::string id(replaced["X-Request-Id"]);
    EXPECT_EQ(id.size(), 16u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);

    auto other = send(bhttp::verb::get, "/healthz");
    EXPECT_NE(std::string(other["X-Request-Id"]), id);  // a fresh one per request
}

TEST_F(RouterTest, AHandlerThatThrowsIsAnswered500WithItsRequestIdAndCounted) {
    store_.push(test::Scripted::raise);
    Request req{bhttp::verb::get, "/v1/check?policy=login&tenant=t1", 11};
    req.set("X-Request-Id", "thrown-1");
    auto failed = test::run_on_io(router_.handle(req, {})).to_response();
    EXPECT_EQ(failed.result_int(), 500u);
    EXPECT_NE(failed.body().find(R"("error":"internal_error")"), std::string::npos) << failed.body();
    EXPECT_EQ(failed["X-Request-Id"], "thrown-1");
    EXPECT_EQ(http_count("/v1/check", 500), "1");
    EXPECT_EQ(send(bhttp::verb::get, "/v1/check?policy=login&tenant=t1").result_int(), 200u);
}

TEST_F(RouterTest, GetAndPostChecksReachTheStoreAndAnswerTheVerdict) {
    auto allowed = send(bhttp::verb::post, "/v1/check", R"({"policy":"login","tenant":"t1"})");
    EXPECT_EQ(allowed.result_int(), 200u);
    EXPECT_EQ(allowed["X-RateLimit-Limit"], "5");
    EXPECT_EQ(allowed["X-RateLimit-Remaining"], "4");

    store_.push(test::Scripted::deny);
    auto denied = send(bhttp::verb::get, "/v1/check?policy=login&tenant=t1");
    EXPECT_EQ(denied.result_int(), 429u);
    EXPECT_EQ(denied[bhttp::field::retry_after], "7");

    auto bad = send(bhttp::verb::post, "/v1/check", "not json");
    EXPECT_EQ(bad.result_int(), 400u);
    EXPECT_EQ(store_.calls().size(), 2u);  // the bad body never reached the store
}

TEST_F(RouterTest, ReadyzFollowsTheStore) {
    EXPECT_EQ(send(bhttp::verb::get, "/readyz").result_int(), 200u);
    store_.set_ready(false);
    EXPECT_EQ(send(bhttp::verb::get, "/readyz").result_int(), 503u);
}

// Every endpoint x method, spelled out here (not read from the table) so that a row that
// changes its path, methods or handler fails this test.
TEST_F(RouterTest, EveryPathTimesEveryMethodAnswersTheStatusOfItsRow) {
    const bhttp::verb verbs[] = {bhttp::verb::get, bhttp::verb::post, bhttp::verb::put, bhttp::verb::delete_,
                                 bhttp::verb::head, bhttp::verb::patch};
    struct Row {
        const char* target;
        const char* allow;                   // the Allow of a 405
        std::map<bhttp::verb, unsigned> ok;  // the methods it answers, and how
    };
    const Row rows[] = {
        {"/v1/check?policy=login&tenant=t1", "GET, POST", {{bhttp::verb::get, 200}, {bhttp::verb::post, 200}}},
        {"/healthz", "GET", {{bhttp::verb::get, 200}}},
        {"/readyz", "GET", {{bhttp::verb::get, 200}}},
        {"/metrics", "GET", {{bhttp::verb::get, 200}}},
        {"/v1/policies", "GET", {{bhttp::verb::get, 200}}},
        {"/v1/peek?policy=login&tenant=t1", "GET", {{bhttp::verb::get, 200}}},
        {"/v1/reset", "POST", {{bhttp::verb::post, 200}}},
    };
    for (const Row& row : rows) {
        for (bhttp::verb verb : verbs) {
            SCOPED_TRACE(std::string(row.target) + " " + std::string(bhttp::to_string(verb)));
            auto res = send_admin(verb, row.target, "");
            const auto ok = row.ok.find(verb);
            if (ok != row.ok.end()) {
                EXPECT_EQ(res.result_int(), ok->second);
                EXPECT_EQ(res[bhttp::field::allow], "");
                continue;
            }
            EXPECT_EQ(res.result_int(), 405u);
            EXPECT_EQ(res[bhttp::field::allow], row.allow);
            EXPECT_EQ(res[bhttp::field::content_type], "application/json");
            EXPECT_NE(res.body().find("\"method_not_allowed\""), std::string::npos);
        }
    }
}

TEST_F(RouterTest, TheAuthSubrequestTakesAnyMethodOnItsPathAndItsSubpaths) {
    for (const char* path : {"/v1/auth", "/v1/auth/api/orders"}) {
        for (bhttp::verb verb : {bhttp::verb::get, bhttp::verb::post, bhttp::verb::put, bhttp::verb::delete_,
                                 bhttp::verb::head, bhttp::verb::options}) {
            SCOPED_TRACE(std::string(path) + " " + std::string(bhttp::to_string(verb)));
            const auto status = send(verb, path).result_int();
            EXPECT_NE(status, 404u);
            EXPECT_NE(status, 405u);
        }
    }
    EXPECT_EQ(send(bhttp::verb::get, "/v1/authz").result_int(), 404u);
}

TEST_F(RouterTest, NeighboursOfEveryPathInTheTableAre404) {
    for (const Endpoint& e : endpoint_table()) {
        std::vector<std::string> neighbours = {std::string(e.path) + "x", std::string(e.path.substr(1)),
                                               std::string(e.path.substr(0, e.path.size() - 1))};
        if (!e.subpaths) neighbours.push_back(std::string(e.path) + "/x");
        for (const auto& path : neighbours) {
            SCOPED_TRACE(path);
            auto res = send(bhttp::verb::get, path);
            EXPECT_EQ(res.result_int(), 404u);
            EXPECT_EQ(res[bhttp::field::allow], "");
            EXPECT_NE(res.body().find("\"not_found\""), std::string::npos);
        }
    }
    EXPECT_TRUE(store_.calls().empty());
}

TEST_F(RouterTest, TheTableDerivesAllowAndRouteLabels) {
    std::map<std::string, std::string> allow;
    for (const Endpoint& e : endpoint_table()) allow[std::string(e.path)] = allow_header(e);
    // /v1/top (heavy hitters), / (the status page), /v1/report, /v1/release, /v1/envoy/*, and
    // envoyproxy/ratelimit's /healthcheck, /json, /rlconfig; /v1/audit; /v1/notify/test (quota webhooks);
    // /v1/status/history (the status page's charts)
    EXPECT_EQ(allow.size(), 20u);
    EXPECT_EQ(allow["/v1/status/history"], "GET");
    EXPECT_EQ(allow["/v1/audit"], "GET");
    EXPECT_EQ(allow["/v1/notify/test"], "POST");
    EXPECT_EQ(allow["/healthcheck"], "GET");
    EXPECT_EQ(allow["/json"], "POST");
    EXPECT_EQ(allow["/rlconfig"], "GET");
    EXPECT_EQ(allow["/v1/release"], "POST");
    EXPECT_EQ(allow["/v1/report"], "POST");
    EXPECT_EQ(allow["/"], "GET");
    EXPECT_EQ(allow["/v1/check"], "GET, POST");
    EXPECT_EQ(allow["/v1/top"], "GET");
    EXPECT_EQ(allow["/v1/envoy/peek"], "GET");
    EXPECT_EQ(allow["/v1/envoy/reset"], "POST");
    EXPECT_EQ(allow["/v1/reset"], "POST");
    EXPECT_EQ(allow["/metrics"], "GET");
    EXPECT_EQ(route_label("/v1/auth/anything/here"), "/v1/auth");
    EXPECT_EQ(route_label("/v1/peek"), "/v1/peek");
    EXPECT_EQ(route_label("/v1/peeks"), "other");
    EXPECT_EQ(route_label(""), "other");
}

TEST_F(RouterTest, AdminPathsWithATokenNeedItBeforeAnythingElse) {
    options_.admin_token = "admin-token-0123456789";
    const std::string good = "Bearer admin-token-0123456789";
    const struct {
        bhttp::verb method;
        const char* target;
    } calls[] = {{bhttp::verb::get, "/v1/policies"},
                 {bhttp::verb::get, "/v1/peek?policy=login&tenant=t1"},
                 {bhttp::verb::post, "/v1/reset"}};
    for (const auto& call : calls) {
        SCOPED_TRACE(call.target);
        for (std::string_view bad : {"", "Bearer wrong-token", "Basic admin-token-0123456789"}) {
            auto res = send_admin(call.method, call.target, bad);
            EXPECT_EQ(res.result_int(), 401u);
            EXPECT_EQ(res[bhttp::field::www_authenticate], "Bearer realm=\"ratelimitd-admin\"");
            EXPECT_EQ(res.body().find("admin-token"), std::string::npos);
        }
        // A wrong method without the token is 401 too: no hint about the endpoint's methods.
        EXPECT_EQ(send_admin(bhttp::verb::put, call.target, "").result_int(), 401u);
        EXPECT_EQ(send_admin(bhttp::verb::put, call.target, good).result_int(), 405u);
        // The token works from any peer.
        EXPECT_EQ(send_admin(call.method, call.target, good, "192.0.2.7").result_int(), 200u);
    }
    EXPECT_EQ(store_.calls().size(), 2u);  // the allowed peek and reset only
}

TEST_F(RouterTest, AdminPathsWithoutATokenAnswerLoopbackPeersOnly) {
    for (const char* peer : {"192.0.2.7", "10.0.0.1", ""}) {
        SCOPED_TRACE(peer);
        auto res = send_admin(bhttp::verb::get, "/v1/policies", "", peer);
        EXPECT_EQ(res.result_int(), 403u);
        EXPECT_NE(res.body().find("\"admin_disabled\""), std::string::npos);
        EXPECT_NE(res.body().find("RATELIMITD_ADMIN_TOKEN"), std::string::npos);
    }
    EXPECT_EQ(send_admin(bhttp::verb::get, "/v1/policies", "", "::1").result_int(), 200u);
    // Non-admin endpoints do not care about the peer.
    EXPECT_EQ(send_admin(bhttp::verb::get, "/healthz", "", "192.0.2.7").result_int(), 200u);
}

TEST_F(RouterTest, AStoreFailureOnPeekOrResetIs503) {
    store_.push(errc::store_unavailable);
    EXPECT_EQ(send_admin(bhttp::verb::get, "/v1/peek?policy=login&tenant=t1", "").result_int(), 503u);
    store_.push(errc::store_timeout);
    EXPECT_EQ(send_admin(bhttp::verb::post, "/v1/reset", "").result_int(), 503u);
}

TEST_F(RouterTest, InsaneCallerIdsAreReplacedOnEveryKindOfAnswer) {
    const std::string too_long(129, 'a');
    const std::string longest(128, 'a');
    for (const char* target : {"/healthz", "/nowhere", "/v1/check?policy=login&tenant=t1"}) {
        for (const std::string& bad : {std::string("has space"), std::string("semi;colon"), too_long,
                                       std::string("quote\"d"), std::string("\x7f")}) {
            SCOPED_TRACE(std::string(target) + " id " + bad.substr(0, 20));
            Request req{bhttp::verb::get, target, 11};
            req.set("X-Request-Id", bad);
            const std::string id(test::run_on_io(router_.handle(req, {})).to_response()["X-Request-Id"]);
            EXPECT_EQ(id.size(), 16u);
            EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
        }
        Request req{bhttp::verb::put, target, 11};  // a 405 echoes it too
        req.set("X-Request-Id", longest);
        EXPECT_EQ(test::run_on_io(router_.handle(req, {})).to_response()["X-Request-Id"], longest);
    }
}

TEST_F(RouterTest, EachRequestIsCountedUnderItsRowsRouteLabel) {
    send(bhttp::verb::post, "/v1/check", R"({"policy":"login","tenant":"t1"})");
    store_.push(test::Scripted::deny);
    send(bhttp::verb::get, "/v1/check?policy=login&tenant=t1");
    send(bhttp::verb::get, "/v1/auth/api/orders");
    send(bhttp::verb::post, "/healthz");
    send(bhttp::verb::get, "/healthz");
    send(bhttp::verb::get, "/tenant-chosen-path-1");
    send(bhttp::verb::get, "/tenant-chosen-path-2");
    send(bhttp::verb::get, "/v1/policies");
    EXPECT_EQ(http_count("/v1/check", 200), "1");
    EXPECT_EQ(http_count("/v1/check", 429), "1");
    EXPECT_NE(http_count("/v1/auth", send(bhttp::verb::get, "/v1/auth").result_int()), "0");
    EXPECT_EQ(http_count("/healthz", 405), "1");
    EXPECT_EQ(http_count("/healthz", 200), "1");
    EXPECT_EQ(http_count("other", 404), "2");  // unknown paths never become labels
    EXPECT_EQ(http_count("/v1/policies", 200), "1");
    EXPECT_EQ(metrics_.render("0", "scripted").find("tenant-chosen"), std::string::npos);
}

TEST_F(RouterTest, MetricsRendersTheMetricsTheRouterWasGiven) {
    metrics_.count_reload(false);
    auto res = send(bhttp::verb::get, "/metrics");
    EXPECT_EQ(res[bhttp::field::content_type], "text/plain; version=0.0.4; charset=utf-8");
    EXPECT_EQ(res[bhttp::field::cache_control], "no-store");
    EXPECT_NE(res.body().find("ratelimitd_reloads_total{result=\"failure\"} 1\n"), std::string::npos);
}

}  // namespace
}  // namespace ratelimitd::http
