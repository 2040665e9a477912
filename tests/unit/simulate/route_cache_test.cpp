// RouteCache: the route match_route finds, for every spelling of a path and query, remembered
// by method and path; bounded.
#include "ratelimitd/simulate/route_cache.hpp"

#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/resolve.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ratelimitd::simulate {
namespace {

policy::Registry routes() {
    return policy::parse_config(R"(
policies:
  api: { algorithm: token_bucket, limit: 10, window: 1m }
  login: { algorithm: fixed_window, limit: 5, window: 1m }
  exports: { algorithm: sliding_log, limit: 2, window: 1h }
routes:
  - { method: POST, path: /v1/exports, policy: exports }
  - { path: /login, policy: login }
  - { path: /health, policy: none }
  - { path: "/v1/*", policy: api }
)",
                                "routes.yaml")
        .registry;
}

TEST(RouteCache, AnswersAsMatchRouteForEverySpellingAndRemembersByPath) {
    const policy::Registry reg = routes();
    RouteCache cache(reg, 65'536, 0);
    const char* uris[] = {"/login", "/login?next=/v1/a", "/login#frag", "//login", "/%6cogin", "/v1/../login",
                          "/login;jsessionid=1", "/v1/exports", "/v1/exports?x=1", "/health", "/health?x",
                          "/v1/../health", "/v1/items?page=2", "/v1/items?page=3", "/other", "/other?q=/login",
                          "http://host/login?x", "http://host/v1/a", "*", ""};
    // Twice over: the second round answers from what the first remembered. Then again with
    // normal paths matched directly (few routes), as a replay does by default.
    RouteCache direct(reg, 65'536, 8);
    for (int round = 0; round < 2; ++round) {
        for (const char* method : {"GET", "POST", "post"}) {
            for (const char* uri : uris) {
                EXPECT_EQ(direct.match(method, uri), policy::match_route(reg, method, uri)) << method << " " << uri;
            }
        }
    }
    EXPECT_EQ(direct.match("GET", "/v1/items/7")->policy, "api");
    for (int round = 0; round < 2; ++round) {
        for (const char* method : {"GET", "POST", "post"}) {
            for (const char* uri : uris) {
                EXPECT_EQ(cache.match(method, uri), policy::match_route(reg, method, uri)) << method << " " << uri;
            }
        }
    }
    ASSERT_NE(cache.match("POST", "/v1/exports?a=1"), nullptr);
    EXPECT_EQ(cache.match("POST", "/v1/exports?a=1")->policy, "exports");
    EXPECT_EQ(cache.match("GET", "/v1/exports?a=1")->policy, "api");
    // "/v1/items?page=2" and "?page=3" are one path; absolute-form targets are not remembered.
    const std::size_t remembered = cache.size();
    cache.match("GET", "/v1/items?page=4");
    cache.match("GET", "http://host/v1/x");
    EXPECT_EQ(cache.size(), remembered);
}

TEST(RouteCache, PastItsCapacityNewPathsAreMatchedButNotRemembered) {
    const policy::Registry reg = routes();
    RouteCache cache(reg, 4, 0);  // every path through the cache, normal ones included
    for (int i = 0; i < 100; ++i) {
        const std::string uri = "/v1/items/" + std::to_string(i);
        ASSERT_NE(cache.match("GET", uri), nullptr) << uri;
        EXPECT_EQ(cache.match("GET", uri)->policy, "api");
    }
    EXPECT_EQ(cache.size(), 4u);
    EXPECT_EQ(cache.match("POST", "/login")->policy, "login");
}

}  // namespace
}  // namespace ratelimitd::simulate
