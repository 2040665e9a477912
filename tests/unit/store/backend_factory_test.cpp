// make_backend and the backends it makes, without any server: which URL makes which kind,
// what a bad URL says, which config each refuses, and what each reports to the metrics.
#include "ratelimitd/store/backend_factory.hpp"

#include "ratelimitd/config/setting_values.hpp"

#include "support/manual_clock.hpp"
#include "support/run_on_io.hpp"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <string>

namespace ratelimitd::store {
namespace {

using namespace std::chrono_literals;
using ratelimitd::testing::ManualClock;

class BackendFactoryTest : public ::testing::Test {
protected:
    BackendOptions options() {
        BackendOptions o;
        o.clock = &clock_;
        o.instance_id = "test";
        return o;
    }

    static policy::Registry layered_registry() {
        // A layered sliding window: what a cluster still refuses (no exact refund, issue 25).
        policy::Registry r;
        policy::Policy per_ip;
        per_ip.name = "per-ip";
        per_ip.algorithm = policy::Algorithm::sliding_window;
        r.policies.emplace("per-ip", per_ip);
        policy::Route layered;
        layered.path = "/v1/exports";
        layered.policy = "per-key";
        layered.limits.push_back({"per-key", std::string("api_key")});
        layered.limits.push_back({"per-ip", std::string("client_ip")});
        r.routes = {layered};
        return r;
    }

    ManualClock clock_;
};

TEST_F(BackendFactoryTest, NoUrlIsTheEmbeddedStoreSharedByEveryThread) {
    auto backend = make_backend(std::nullopt, options());
    ASSERT_TRUE(backend) << backend.error().detail;
    EXPECT_EQ((*backend)->kind(), "embedded");
    EXPECT_EQ((*backend)->describe(), "embedded");
    EXPECT_FALSE((*backend)->refusal(layered_registry()));

    boost::asio::io_context a, b;
    Store& first = (*backend)->add_thread(a.get_executor());
    Store& second = (*backend)->add_thread(b.get_executor());
    EXPECT_EQ(&first, &second) << "one embedded store, or limits would be per thread";
}

TEST_F(BackendFactoryTest, EmbeddedStatsCountItsKeysOnly) {
    auto backend = make_backend(std::nullopt, options());
    ASSERT_TRUE(backend);
    boost::asio::io_context io;
    Store& store = (*backend)->add_thread(io.get_executor());
    policy::Policy p;
    p.name = "fw";
    p.algorithm = policy::Algorithm::fixed_window;
    p.limit = 5;
    p.window = 1'000ms;
    p.burst = 5;
    for (const char* key : {"k1", "k2"}) {
        auto verdict = test::run_on_io(store.apply(p, key, 1));
        ASSERT_TRUE(verdict && verdict->allowed) << key;
    }

    const BackendStats s = (*backend)->stats();
    ASSERT_TRUE(s.keys);
    EXPECT_EQ(s.keys->keys, 2u);
    EXPECT_EQ(s.keys->evictions, 0u);
    EXPECT_EQ(s.open_breakers, 0);
    EXPECT_FALSE(s.batching);
    EXPECT_FALSE(s.redirects);
}

TEST_F(BackendFactoryTest, EmbeddedStartAndStopLeaveTheAcceptLoopFree) {
    boost::asio::io_context main;  // outlives the backend, whose sweep timer it holds (as in app::run)
    auto backend = make_backend(std::nullopt, options());
    ASSERT_TRUE(backend);
    (*backend)->start(main.get_executor());
    main.poll();  // as in the app: the accept loop runs, the sweep waits on its timer
    (*backend)->stop();
    main.run_for(10s);
    EXPECT_TRUE(main.stopped()) << "the sweep timer still runs after stop()";
}

TEST_F(BackendFactoryTest, RedisUrlIsASingleRedisThatAllowsLayeredLimits) {
    auto backend = make_backend(std::string("redis://127.0.0.1:6379/0"), options());
    ASSERT_TRUE(backend) << backend.error().detail;
    EXPECT_EQ((*backend)->kind(), "redis");
    EXPECT_EQ((*backend)->describe(), "redis://127.0.0.1:6379/0");
    EXPECT_FALSE((*backend)->refusal(layered_registry()));
    const BackendStats s = (*backend)->stats();
    ASSERT_TRUE(s.batching);
    EXPECT_EQ(s.batching->script_calls, 0u);
    EXPECT_FALSE(s.redirects);
    EXPECT_FALSE(s.keys);
}

TEST_F(BackendFactoryTest, ClusterUrlIsAClusterThatRefusesLayeredLimits) {
    auto backend = make_backend(std::string("redis-cluster://127.0.0.1:7000,127.0.0.1:7001"), options());
    ASSERT_TRUE(backend) << backend.error().detail;
    EXPECT_EQ((*backend)->kind(), "redis-cluster");
    auto refusal = (*backend)->refusal(layered_registry());
    ASSERT_TRUE(refusal);
    EXPECT_NE(refusal->find("routes[0] (/v1/exports)"), std::string::npos) << *refusal;
    EXPECT_FALSE((*backend)->refusal(policy::Registry{}));
    const BackendStats s = (*backend)->stats();
    EXPECT_TRUE(s.batching);
    ASSERT_TRUE(s.redirects);
    EXPECT_EQ(s.redirects->moved, 0u);
    EXPECT_FALSE(s.keys);
}

TEST_F(BackendFactoryTest, BadUrlsFailNamingTheSchemeWithoutThePassword) {
    for (const char* url : {"redis://:hunter2@", "redis-cluster://:hunter2@", "http://:hunter2@127.0.0.1:6379"}) {
        auto backend = make_backend(std::string(url), options());
        ASSERT_FALSE(backend) << url;
        EXPECT_EQ(backend.error().code, errc::invalid_request) << url;
        EXPECT_NE(backend.error().detail.find("redis"), std::string::npos) << backend.error().detail;
        EXPECT_EQ(backend.error().detail.find("hunter2"), std::string::npos) << backend.error().detail;
    }
}

// The config file and the flags check store URLs below the store module (config/), against the
// schemes the build reads from the backends' sources (cmake/store_url_schemes.cmake): every
// listed backend's, no more (a backend left out of the list), no fewer.
TEST(BackendKinds, TheSettingsTakeExactlyTheBackendsSchemes) {
    std::set<std::string_view> backends;
    for (const BackendKind* kind : backend_kinds()) backends.insert(kind->schemes.begin(), kind->schemes.end());
    const auto settings = config::store_url_schemes();
    EXPECT_EQ(backends, std::set<std::string_view>(settings.begin(), settings.end()));
}

TEST(BackendKinds, EachUrlHasOneKindAndNoUrlTheEmbeddedStore) {
    for (const BackendKind* kind : backend_kinds()) {
        EXPECT_FALSE(kind->usage.empty()) << kind->name;
        EXPECT_NE(kind->open, nullptr) << kind->name;
        for (const auto scheme : kind->schemes) {
            EXPECT_EQ(backend_kind_of(std::string(scheme) + "h"), kind) << scheme;
            EXPECT_NE(backend_usage().find(scheme), std::string::npos) << scheme;
        }
    }
    ASSERT_NE(backend_kind_of(std::nullopt), nullptr);
    EXPECT_EQ(backend_kind_of(std::nullopt)->name, "embedded");
    EXPECT_EQ(backend_kind_of(std::string("http://h")), nullptr);
}

// The list is generated from the backends' own sources (cmake/store_backend_kinds.cmake), no
// list kept by hand, so this names no count: every registration is listed once, in --help's
// order (help_position), the first being the one a URL no kind takes is handed to (its parser
// says what is wrong), the store of no URL last. A kind the generator missed would still
// declare its schemes, and TheSettingsTakeExactlyTheBackendsSchemes fails on that.
TEST(BackendKinds, TheBuildFindsEveryRegistrationInHelpOrder) {
    const auto found = registered_backend_kinds();
    const auto listed = backend_kinds();
    ASSERT_EQ(listed.size(), found.size());
    EXPECT_EQ(std::set<const BackendKind*>(listed.begin(), listed.end()).size(), found.size());
    for (const BackendKind* kind : found) EXPECT_NE(std::find(listed.begin(), listed.end(), kind), listed.end());
    for (std::size_t i = 1; i < listed.size(); ++i) {
        EXPECT_LE(listed[i - 1]->help_position, listed[i]->help_position) << listed[i]->name;
    }
    ASSERT_FALSE(listed.empty());
    EXPECT_TRUE(listed.front()->takes("redis://h"));
    EXPECT_TRUE(listed.back()->schemes.empty()) << listed.back()->name;
    EXPECT_LT(backend_usage().find("redis://"), backend_usage().find("redis-cluster://"));
    auto unknown = make_backend(std::string("http://h"), BackendOptions{});
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().detail.find("redis"), std::string::npos) << unknown.error().detail;
}

TEST_F(BackendFactoryTest, OnlyAClusterRefusesARegistryBeforeConnecting) {
    EXPECT_TRUE(registry_refusal(std::string("redis-cluster://127.0.0.1:7000"), layered_registry()));
    EXPECT_TRUE(registry_refusal(std::string("rediss-cluster://127.0.0.1:7000"), layered_registry()));
    EXPECT_FALSE(registry_refusal(std::string("redis://127.0.0.1:6379"), layered_registry()));
    EXPECT_FALSE(registry_refusal(std::string("redis-sentinel://127.0.0.1/m"), layered_registry()));
    EXPECT_FALSE(registry_refusal(std::nullopt, layered_registry()));
    EXPECT_FALSE(registry_refusal(std::string("http://h"), layered_registry()));
    EXPECT_FALSE(registry_refusal(std::string("redis-cluster://127.0.0.1:7000"), policy::Registry{}));
}

}  // namespace
}  // namespace ratelimitd::store
