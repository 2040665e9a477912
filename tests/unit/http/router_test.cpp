// The Router's decisions on a local io_context with a scripted store: the endpoint table
// (404, 405 with Allow), request ids, the check and readiness answers.
#include "ratelimitd/http/router.hpp"

#include "ratelimitd/policy/registry_loader.hpp"
#include "support/run_on_io.hpp"
#include "support/scripted_store.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace ratelimitd::http {
namespace {

class RouterTest : public ::testing::Test {
protected:
    RouterTest()
        : registry_(std::make_shared<const policy::Registry>(policy::parse_config(
              "policies:\n  login: { algorithm: fixed_window, limit: 5, window: 1m }\n", "router_test.yaml")
                                                                 .registry)),
          service_(registry_, store_, metrics_),
          router_(service_, options_) {}

    Response send(bhttp::verb method, std::string target, std::string body = {}) {
        Request req{method, target, 11};
        req.body() = std::move(body);
        req.prepare_payload();
        return test::run_on_io(router_.handle(std::move(req), RequestContext{"127.0.0.1"}));
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
    for (const char* path : {"/", "/v1/checks", "/v2/check", "/healthz/", "/v1/check/extra"}) {
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
    auto echoed = test::run_on_io(router_.handle(req, {}));
    EXPECT_EQ(echoed["X-Request-Id"], "abc-123_x.y:z");

    req.set("X-Request-Id", "evil\"id with spaces");
    auto replaced = test::run_on_io(router_.handle(req, {}));
    const std::string id(replaced["X-Request-Id"]);
    EXPECT_EQ(id.size(), 16u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);

    auto other = send(bhttp::verb::get, "/healthz");
    EXPECT_NE(std::string(other["X-Request-Id"]), id);  // a fresh one per request
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

}  // namespace
}  // namespace ratelimitd::http
