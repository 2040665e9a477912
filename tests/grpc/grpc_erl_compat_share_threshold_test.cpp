// envoyproxy/ratelimit's TestShareThreshold (test/config/config_test.go), subtest by subtest, on
// its share_threshold.yaml (tests/data/erl-tests/config/, verbatim) in ERL mode: two values a
// share_threshold wildcard matches reach the limit that test expects and count on one counter,
// the one its cache key names (each shared entry's value replaced by the pattern). Its stats-key
// assertions have no counterpart here (docs/envoy.md). Test name: ErlCompat.Config_TestShareThreshold_*.
#include "grpc/erl_mode_fixture.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace ratelimitd::test::grpc_erl_compat_share_threshold_test {
namespace {

struct SharedCase {
    const char* subtest;
    ErlEntries first;
    ErlEntries second;
    ErlEntries key_entries;  // the entries its cache key is written from
    std::uint32_t limit;
};

class ErlCompatShareThreshold : public ErlModeTest {
protected:
    void SetUp() override {
        ErlModeTest::SetUp();
        add_config(std::filesystem::path(RATELIMITD_TEST_DATA_DIR) / "erl-tests" / "config" / "share_threshold.yaml");
    }
    /// Both values, one hit each, in one minute: the second has limit − 2 left, one counter at 2.
    void expect_shared(const SharedCase& c) {
        SCOPED_TRACE(c.subtest);
        for (int attempt = 0; attempt < 3; ++attempt) {  // again should a minute begin between the calls
            fresh_counters();
            const std::int64_t at = epoch_seconds();
            call("test-domain", {c.first}, {1});
            const RlsResponse second = call("test-domain", {c.second}, {1});
            if (epoch_seconds() / 60 != at / 60) continue;
            ASSERT_EQ(second.statuses_size(), 1);
            EXPECT_EQ(second.statuses(0).current_limit().requests_per_unit(), c.limit);
            EXPECT_EQ(second.statuses(0).limit_remaining(), c.limit - 2);
            EXPECT_EQ(redis_.keys(), std::vector<std::string>{erl_key("test-domain", c.key_entries, 60, at)});
            return;
        }
        ADD_FAILURE() << "no minute held the calls";
    }
};

TEST_F(ErlCompatShareThreshold, Config_TestShareThreshold_Basic) {
    ASSERT_NO_FATAL_FAILURE(serve());
    expect_shared({"Basic share_threshold", {{"files", "files/a.pdf"}}, {{"files", "files/b.csv"}},
                   {{"files", "files/*"}}, 100});
}

TEST_F(ErlCompatShareThreshold, Config_TestShareThreshold_WithMetrics) {
    ASSERT_NO_FATAL_FAILURE(serve());
    expect_shared({"over value_to_metric", {{"route", "api/v1"}, {"method", "GET"}},
                   {{"route", "api/v2"}, {"method", "GET"}}, {{"route", "api/*"}, {"method", "GET"}}, 60});
    expect_shared({"over detailed_metric", {{"service", "svc/user"}, {"endpoint", "get"}},
                   {{"service", "svc/order"}, {"endpoint", "get"}}, {{"service", "svc/*"}, {"endpoint", "get"}}, 80});
}

TEST_F(ErlCompatShareThreshold, Config_TestShareThreshold_NestedWildcards) {
    ASSERT_NO_FATAL_FAILURE(serve());
    expect_shared({"nested", {{"nested", "parent"}, {"files", "nested/file1.txt"}},
                   {{"nested", "parent"}, {"files", "nested/file2.txt"}},
                   {{"nested", "parent"}, {"files", "nested/*"}}, 200});
    expect_shared({"same key twice", {{"files", "top/file1.txt"}, {"files", "nested/file1.txt"}},
                   {{"files", "top/x"}, {"files", "nested/y"}}, {{"files", "top/*"}, {"files", "nested/*"}}, 300});
    // file/* has share_threshold: false: only path/* is shared, the file value is its own.
    expect_shared({"mixed", {{"path", "path/foo"}, {"file", "file/doc1"}, {"type", "pdf"}},
                   {{"path", "path/bar"}, {"file", "file/doc1"}, {"type", "pdf"}},
                   {{"path", "path/*"}, {"file", "file/doc1"}, {"type", "pdf"}}, 120});
    expect_shared({"both shared", {{"user", "user/alice"}, {"resource", "res/file1"}, {"action", "read"}},
                   {{"user", "user/bob"}, {"resource", "res/file2"}, {"action", "read"}},
                   {{"user", "user/*"}, {"resource", "res/*"}, {"action", "read"}}, 150});
}

TEST_F(ErlCompatShareThreshold, Config_TestShareThreshold_ExplicitValuePrecedenceOverWildcard) {
    ASSERT_NO_FATAL_FAILURE(serve());
    EXPECT_EQ(limit_of("test-domain", {{"file", "test1"}}), "50/MINUTE") << "its own limit, its own counter";
    expect_shared({"test*", {{"file", "test2"}}, {{"file", "test3"}}, {{"file", "test*"}}, 100});
}

TEST_F(ErlCompatShareThreshold, Config_TestShareThreshold_MiddleAndMultiWildcards) {
    ASSERT_NO_FATAL_FAILURE(serve());
    expect_shared({"middle", {{"midpath", "/apiXv1"}}, {{"midpath", "/api/long/v1"}}, {{"midpath", "/api*v1"}}, 100});
    expect_shared({"multi", {{"multiroute", "svc1ep2rpc"}}, {{"multiroute", "svcAepBrpc"}},
                   {{"multiroute", "svc*ep*rpc"}}, 50});
    expect_shared({"over value_to_metric", {{"midroute", "/apiXv2"}}, {{"midroute", "/apiYv2"}},
                   {{"midroute", "/api*v2"}}, 80});
    expect_shared({"nested middle", {{"tenant", "t1prod"}, {"resource", "res1v2"}},
                   {{"tenant", "t2prod"}, {"resource", "resXv2"}}, {{"tenant", "t*prod"}, {"resource", "res*v2"}}, 60});
}

}  // namespace
}  // namespace ratelimitd::test::grpc_erl_compat_share_threshold_test
