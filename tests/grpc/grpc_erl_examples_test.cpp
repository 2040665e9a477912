// envoyproxy/ratelimit's own example configs (tests/data/erl-examples/, verbatim) served in ERL
// mode: the real binary started as `ratelimit` with only ERL's variables, a real redis-server,
// a gRPC client from Envoy's protos. Each file loads (or, unlimited_with_unit.yaml, is refused as
// ERL refuses it) and answers as ERL's README and tests say; quota_mode as its service tests
// decide it; response headers as ERL adds them; each file and domain named in the log.
#include "grpc/erl_mode_fixture.hpp"
#include "support/held_window.hpp"
#include "support/http_client.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace ratelimitd::test::grpc_erl_examples_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const fs::path examples = fs::path(RATELIMITD_TEST_DATA_DIR) / "erl-examples";

using Entries = ErlEntries;

// One example file in a runtime directory, and ratelimitd started on it as `ratelimit`.
class ErlExample : public ErlModeTest {
protected:
    /// Starts ratelimitd as `ratelimit` with `file` (an example) as its only config.
    void start(const std::string& file) {
        add_config(examples / file);
        ErlModeTest::start();
    }
    void serve(const std::string& file) {
        add_config(examples / file);
        ErlModeTest::serve();
    }
};

// test/config/config_test.go's TestBasicConfig, through the wire.
TEST_F(ErlExample, BasicConfigAnswersAsItsTestSays) {
    ASSERT_NO_FATAL_FAILURE(serve("basic_config.yaml"));
    EXPECT_EQ(limit_of("test-domain", {{"key1", "value1"}, {"subkey1", "something"}}), "5/SECOND");
    EXPECT_EQ(limit_of("test-domain", {{"key1", "value1"}, {"subkey1", "subvalue1"}}), "10/SECOND");
    EXPECT_EQ(limit_of("test-domain", {{"key1", "value1"}}), "none");
    EXPECT_EQ(limit_of("test-domain", {{"key2", "something"}}), "20/MINUTE");
    EXPECT_EQ(limit_of("test-domain", {{"key2", "value2"}}), "30/MINUTE");
    EXPECT_EQ(limit_of("test-domain", {{"key2", "value3"}}), "none");
    EXPECT_EQ(limit_of("test-domain", {{"key3", "foo"}}), "1/HOUR");
    EXPECT_EQ(limit_of("test-domain", {{"key4", "foo"}}), "1/DAY key4_rate_limit");
    EXPECT_EQ(limit_of("test-domain", {{"key5", "value5"}, {"subkey5", "subvalue5"}}), "25/DAY");
    EXPECT_EQ(limit_of("test-domain", {{"key6", "foo"}}), "unlimited");
    EXPECT_EQ(limit_of("test-domain", {{"key7", "unspecified"}}), "70/MINUTE");
}

// TestWildcardConfig: a '*' at the end, in the middle, several, and nested.
TEST_F(ErlExample, WildcardConfigMatchesAsItsTestSays) {
    ASSERT_NO_FATAL_FAILURE(serve("wildcard.yaml"));
    EXPECT_EQ(limit_of("test-domain", {{"wild", "foo123"}}), "20/MINUTE");
    EXPECT_EQ(limit_of("test-domain", {{"wild", "bar"}}), "none");
    EXPECT_EQ(limit_of("test-domain", {{"noWild", "foo1"}}), "none");
    EXPECT_EQ(limit_of("test-domain", {{"noVal", "anything"}}), "20/MINUTE");
    EXPECT_EQ(limit_of("test-domain", {{"midWild", "barXYZb"}}), "20/MINUTE");
    EXPECT_EQ(limit_of("test-domain", {{"multiWild", "foo1bar2baz"}}), "10/MINUTE");
    EXPECT_EQ(limit_of("test-domain", {{"nestedWild", "val1"}, {"wild", "goo2"}}), "20/MINUTE");
}

// TestShadowModeConfig: a shadow rule over its limit answers OK; its enforced sibling denies.
TEST_F(ErlExample, ShadowModeConfigLetsShadowRulesThrough) {
    ASSERT_NO_FATAL_FAILURE(serve("shadowmode_config.yaml"));
    fresh_counters();
    const RlsResponse shadow = call("test-domain", {{{"key2", "any"}}}, {25});
    EXPECT_EQ(shadow.overall_code(), RlsResponse::OK);
    EXPECT_EQ(shadow.statuses(0).code(), RlsResponse::OK);
    const RlsResponse enforced = call("test-domain", {{{"key2", "value2"}}}, {31});
    EXPECT_EQ(enforced.overall_code(), RlsResponse::OVER_LIMIT);
}

// test/config/share_threshold.yaml: every value a share_threshold wildcard matches spends one
// counter (keyed by the pattern); an exact rule beside it still counts on its own.
TEST_F(ErlExample, ShareThresholdValuesSpendOneCounter) {
    ASSERT_NO_FATAL_FAILURE(serve("share_threshold.yaml"));
    EXPECT_EQ(limit_of("test-domain", {{"file", "test1"}}), "50/MINUTE") << "the exact rule wins";
    EXPECT_EQ(limit_of("test-domain", {{"file", "test2"}}), "100/MINUTE");
    // Two calls in one minute's window: should a window start between them, again.
    in_one_window(1min, [&](int) {
        fresh_counters();
        const RlsResponse a = call("test-domain", {{{"files", "files/a.pdf"}}}, {60});
        const RlsResponse b = call("test-domain", {{{"files", "files/b.csv"}}}, {50});
        EXPECT_EQ(a.overall_code(), RlsResponse::OK);
        EXPECT_EQ(a.statuses(0).limit_remaining(), 40u);
        EXPECT_EQ(b.overall_code(), RlsResponse::OVER_LIMIT) << "files/* is one budget of 100: 60 + 50";
        EXPECT_EQ(redis_.keys().size(), 1u) << "one counter";
    });
}

// README example 2: nested and top-level rules of one call, a logical OR.
TEST_F(ErlExample, ReadmeExample2LimitsMarketingPerNumberAndEveryNumber) {
    ASSERT_NO_FATAL_FAILURE(serve("readme_example2.yaml"));
    EXPECT_EQ(limit_of("messaging", {{"message_type", "marketing"}, {"to_number", "2061111111"}}), "5/DAY");
    EXPECT_EQ(limit_of("messaging", {{"to_number", "2061111111"}}), "100/DAY");
    fresh_counters();
    const std::vector<Entries> both{{{"message_type", "marketing"}, {"to_number", "2062222222"}},
                                    {{"to_number", "2062222222"}}};
    EXPECT_EQ(call("messaging", both, {5, 5}).overall_code(), RlsResponse::OK);
    const RlsResponse sixth = call("messaging", both);
    EXPECT_EQ(sixth.overall_code(), RlsResponse::OVER_LIMIT) << "the marketing limit (5) is spent";
    EXPECT_EQ(sixth.statuses(0).code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(sixth.statuses(1).code(), RlsResponse::OK);
}

// README example 3: 10 per second for each address, 0 for the blacklisted one.
TEST_F(ErlExample, ReadmeExample3BlacklistsOneAddress) {
    ASSERT_NO_FATAL_FAILURE(serve("readme_example3.yaml"));
    EXPECT_EQ(limit_of("edge_proxy_per_ip", {{"remote_address", "50.0.0.1"}}), "10/SECOND");
    EXPECT_EQ(call("edge_proxy_per_ip", {{{"remote_address", "50.0.0.5"}}}).overall_code(), RlsResponse::OVER_LIMIT);
}

// README example 7: `replaces` drops the named limit only where both are matched.
TEST_F(ErlExample, ReadmeExample7ReplacesTheNamedLimit) {
    ASSERT_NO_FATAL_FAILURE(serve("readme_example7.yaml"));
    EXPECT_EQ(limit_of("example7", {{"key_1", "value_1"}, {"user", "bkthomps"}}), "5/SECOND specific_limit");
    EXPECT_EQ(limit_of("example7", {{"key_2", "value_2"}, {"user", "bkthomps"}}), "10/SECOND");
    const RlsResponse both = call("example7", {{{"key_1", "value_1"}, {"user", "bkthomps"}},
                                               {{"key_2", "value_2"}, {"user", "bkthomps"}}});
    EXPECT_FALSE(both.statuses(0).has_current_limit()) << "replaced";
    EXPECT_EQ(both.statuses(1).current_limit().requests_per_unit(), 10u);
}

// ERL refuses unlimited beside a unit at load; so does ratelimitd, exiting non-zero.
TEST_F(ErlExample, UnlimitedWithUnitIsRefusedAsErlRefusesIt) {
    start("unlimited_with_unit.yaml");
    EXPECT_NE(process_.wait(process_start_bound), 0);
    EXPECT_NE(process_.log().find("not allowed with unlimited: true"), std::string::npos) << process_.log();
}

// ERL's quick-start config (the file its docker-compose.yml mounts): the README's curls.
TEST_F(ErlExample, ExampleYamlLoadsAndAnswersAsTheReadmeSays) {
    ASSERT_NO_FATAL_FAILURE(serve("example.yaml"));
    fresh_counters();
    EXPECT_EQ(call("rl", {{{"foo", "foo"}, {"bar", "banned"}}}).overall_code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(call("rl", {{{"foo", "foo"}, {"baz", "shady"}}}, {10}).overall_code(), RlsResponse::OK)
        << "shadow_mode: never limited";
    EXPECT_EQ(call("rl", {{{"foo", "foo"}, {"baz", "not-so-shady"}}}, {4}).overall_code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(limit_of("rl", {{"foo", "foo"}, {"bay", "x"}}), "unlimited");
    // (category, account) replaces bkthomps: (foo, bar=bkthomps) loses its limit beside it.
    const RlsResponse replaced = call("rl", {{{"foo", "foo"}, {"bar", "bkthomps"}}, {{"category", "account"}}});
    EXPECT_FALSE(replaced.statuses(0).has_current_limit());
    EXPECT_EQ(replaced.statuses(1).current_limit().requests_per_unit(), 4u);
    EXPECT_EQ(limit_of("rl", {{"service", "service_1"}}), "1/MINUTE");
    // /rlconfig prints each rule as it does, quota_mode included.
    HttpClient debug(static_cast<unsigned short>(std::stoi(vars_.at("DEBUG_PORT"))));
    const std::string dump = debug.get("/rlconfig").body;
    EXPECT_NE(dump.find("rl.service_service_1: unit=MINUTE requests_per_unit=1, shadow_mode: false, quota_mode: true"),
              std::string::npos)
        << dump;
}

// quota_mode (example.yaml's service_1: 1/minute, service_2: 2/minute), as envoyproxy/ratelimit's
// service tests decide a call: over only when every quota descriptor is; a regular one over
// denies on its own; each descriptor says its own code.
TEST_F(ErlExample, QuotaModeDeniesOnlyWhenEveryQuotaDescriptorIsOver) {
    ASSERT_NO_FATAL_FAILURE(serve("example.yaml"));
    const std::vector<Entries> services{{{"service", "service_1"}}, {{"service", "service_2"}}};
    fresh_counters();
    const RlsResponse one_over = call("rl", services, {2, 1});
    EXPECT_EQ(one_over.overall_code(), RlsResponse::OK);
    EXPECT_EQ(one_over.statuses(0).code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(one_over.statuses(1).code(), RlsResponse::OK);
    EXPECT_EQ(one_over.statuses(1).limit_remaining(), 1u);

    fresh_counters();
    const RlsResponse all_over = call("rl", services, {2, 3});
    EXPECT_EQ(all_over.overall_code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(all_over.statuses(0).code(), RlsResponse::OVER_LIMIT);
    EXPECT_EQ(all_over.statuses(1).code(), RlsResponse::OVER_LIMIT);

    fresh_counters();
    const RlsResponse lone_quota_over = call("rl", {{{"foo", "f"}}, {{"service", "service_1"}}}, {1, 2});
    EXPECT_EQ(lone_quota_over.overall_code(), RlsResponse::OVER_LIMIT) << "its only quota descriptor is over";
    EXPECT_EQ(lone_quota_over.statuses(0).code(), RlsResponse::OK);

    fresh_counters();
    const RlsResponse regular_over = call("rl", {{{"foo", "f"}}, {{"service", "service_2"}}}, {3, 1});
    EXPECT_EQ(regular_over.overall_code(), RlsResponse::OVER_LIMIT) << "a regular limit over denies on its own";
    EXPECT_EQ(regular_over.statuses(1).code(), RlsResponse::OK);

    // Counted as any limit (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT=false, ERL's default): the
    // next call finds service_1 still over, service_2 spent. Two calls in one minute's window:
    // should a window start between them, the pair is made again.
    in_one_window(1min, [&](int) {
        fresh_counters();
        EXPECT_EQ(call("rl", services, {2, 2}).overall_code(), RlsResponse::OK);
        EXPECT_EQ(call("rl", services).overall_code(), RlsResponse::OVER_LIMIT);
    });
}

// QUOTA_MODE=true: every descriptor in quota mode (its TestServiceGlobalQuotaMode): one under
// its limit lets the call through, all over deny it.
TEST_F(ErlExample, GlobalQuotaModeDeniesOnlyWhenEveryDescriptorIsOver) {
    vars_["QUOTA_MODE"] = "true";
    ASSERT_NO_FATAL_FAILURE(serve("basic_config.yaml"));
    const std::vector<Entries> two{{{"key3", "a"}}, {{"key2", "b"}}};  // 1/hour and 20/minute
    fresh_counters();
    const RlsResponse one_over = call("test-domain", two, {2, 1});
    EXPECT_EQ(one_over.overall_code(), RlsResponse::OK);
    EXPECT_EQ(one_over.statuses(0).code(), RlsResponse::OVER_LIMIT);
    fresh_counters();
    EXPECT_EQ(call("test-domain", two, {2, 21}).overall_code(), RlsResponse::OVER_LIMIT);
}

// ERL's default adds no header to the client's response: neither do we in ERL mode.
TEST_F(ErlExample, NoResponseHeadersByDefault) {
    ASSERT_NO_FATAL_FAILURE(serve("example.yaml"));
    fresh_counters();
    EXPECT_EQ(call("rl", {{{"foo", "f"}}}).response_headers_to_add_size(), 0);
    EXPECT_EQ(call("rl", {{{"foo", "f"}}}, {5}).response_headers_to_add_size(), 0) << "over the limit too";
}

// LIMIT_RESPONSE_HEADERS_ENABLED=true: ERL's three headers by the names configured, for the
// descriptor with the least remaining.
TEST_F(ErlExample, ErlsHeadersWhenEnabledByTheirNames) {
    vars_["LIMIT_RESPONSE_HEADERS_ENABLED"] = "true";
    vars_["LIMIT_REMAINING_HEADER"] = "X-Left";
    ASSERT_NO_FATAL_FAILURE(serve("example.yaml"));
    fresh_counters();
    const RlsResponse res = call("rl", {{{"foo", "f"}}, {{"foo", "f"}, {"bar", "x"}}});  // 2/min and 3/min
    std::map<std::string, std::string> headers;
    for (const auto& h : res.response_headers_to_add()) headers[h.key()] = h.value();
    ASSERT_EQ(headers.size(), 3u) << res.DebugString();
    EXPECT_EQ(headers.at("RateLimit-Limit"), "2");
    EXPECT_EQ(headers.at("X-Left"), "1");
    const int reset = std::stoi(headers.at("RateLimit-Reset"));
    EXPECT_GE(reset, 1);
    EXPECT_LE(reset, 60);
}

// ERL mode says what it loaded, at info: each runtime file and each domain.
TEST_F(ErlExample, LogsEachRuntimeFileAndDomainLoaded) {
    ASSERT_NO_FATAL_FAILURE(serve("readme_example7.yaml"));
    const std::string file = (config_dir() / "readme_example7.yaml").lexically_normal().string();
    EXPECT_FALSE(process_.wait_for_log("erl: runtime file loaded file=\"" + file + "\"", process_start_bound).empty())
        << process_.log();
    EXPECT_FALSE(process_.wait_for_log("erl: domain loaded domain=\"example7\"", process_start_bound).empty())
        << process_.log();
    // A new file is named when it is loaded.
    fs::copy_file(examples / "readme_example3.yaml", dir_ / "next.yaml");
    fs::rename(dir_ / "next.yaml", config_dir() / "readme_example3.yaml");
    EXPECT_FALSE(process_.wait_for_log("erl: domain loaded domain=\"edge_proxy_per_ip\"", 10s).empty())
        << process_.log();
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_examples_test
