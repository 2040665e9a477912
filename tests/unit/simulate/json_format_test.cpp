// JSON-lines logs: members mapped by name (nested too), times in every form, refusals.
#include "ratelimitd/simulate/json_format.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::simulate {
namespace {

TEST(JsonFormat, DefaultMembersAndEveryTimeForm) {
    JsonFormat f(JsonFields{});
    LogRequest r;
    ASSERT_EQ(f.parse(R"({"time":"2025-12-01T12:00:00Z","method":"GET","uri":"/a?b=1","client":"192.0.2.1"})", r), nullptr);
    EXPECT_EQ(r.time_ms, 1'764'590'400'000);
    EXPECT_EQ(r.method, "GET");
    EXPECT_EQ(r.uri, "/a?b=1");
    EXPECT_EQ(r.client, "192.0.2.1");
    ASSERT_EQ(f.parse(R"({"time":1764590400.5,"method":"GET","uri":"/","client":"::1"})", r), nullptr);
    EXPECT_EQ(r.time_ms, 1'764'590'400'500);
    ASSERT_EQ(f.parse(R"({"time":1764590400500,"method":"GET","uri":"/","client":"::1"})", r), nullptr);
    EXPECT_EQ(r.time_ms, 1'764'590'400'500) << "milliseconds when too large for seconds";
    ASSERT_EQ(f.parse(R"({"time":"01/Dec/2025:12:00:00 +0000","method":"GET","uri":"/","client":"::1"})", r), nullptr);
    EXPECT_EQ(r.time_ms, 1'764'590'400'000);
}

TEST(JsonFormat, MappedAndNestedMembersWithATenant) {
    JsonFields fields;
    fields.time = "ts";
    fields.method = "http.method";
    fields.uri = "http.path";
    fields.client = "peer.ip";
    fields.tenant = "account";
    fields.tenant_header = "X-Tenant-Id";
    JsonFormat f(fields);
    LogRequest r;
    ASSERT_EQ(f.parse(R"({"ts":"2025-12-01T12:00:00Z","http":{"method":"POST","path":"/login"},"peer":{"ip":"192.0.2.9"},)"
                      R"("account":"acme"})",
                      r),
              nullptr);
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.uri, "/login");
    EXPECT_EQ(r.client, "192.0.2.9");
    ASSERT_EQ(r.headers.size(), 1u);
    EXPECT_EQ(r.headers[0].name, "X-Tenant-Id");
    EXPECT_EQ(r.headers[0].value, "acme");
}

TEST(JsonFormat, LinesThatAreNotRequestsAreRefused) {
    JsonFormat f(JsonFields{});
    LogRequest r;
    for (const char* bad : {"", "{", "[1,2]", "\"text\"", R"({"method":"GET","uri":"/","client":"::1"})",
                            R"({"time":"yesterday","method":"GET","uri":"/","client":"::1"})",
                            R"({"time":-1,"method":"GET","uri":"/","client":"::1"})",
                            R"({"time":1764590400,"uri":"/","client":"::1"})",
                            R"({"time":1764590400,"method":"GET","uri":"/","client":7})"}) {
        EXPECT_NE(f.parse(bad, r), nullptr) << bad;
    }
}

}  // namespace
}  // namespace ratelimitd::simulate
