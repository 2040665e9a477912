// The audit trail of xDS updates (issue 38): each config the control plane sends and the
// sidecar takes is one entry naming its version, the control plane, a digest of its rules and
// each rule's old and new numbers.
#include "grpc/xds_control_plane.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace ratelimitd::test::grpc_xds_audit_test {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

std::vector<json> xds_entries(const std::string& path) {
    std::vector<json> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        auto entry = json::parse(line, nullptr, false);
        if (!entry.is_discarded() && entry.value("source", "") == "xds") out.push_back(std::move(entry));
    }
    return out;
}

TEST(GrpcXdsAudit, EachConfigTakenIsOneEntryWithItsRulesOldAndNewNumbers) {
    XdsControlPlane cp;
    const std::string path = scratch_dir() + "/xds-audit.log";
    Ratelimitd server("prefix: rl\n", "",
                      {"--grpc-listen", "127.0.0.1:0", "--xds-server", cp.address(), "--xds-backoff-initial", "100ms",
                       "--xds-backoff-max", "400ms", "--audit-log", path});
    cp.set("v1", {rls_config("edge", {{"user", "", 5}})});
    ASSERT_TRUE(wait_until([&] { return xds_entries(path).size() >= 1; }, 20s)) << server.process().log();
    cp.set("v2", {rls_config("edge", {{"user", "", 7}, {"probe", "x", 9}})});
    ASSERT_TRUE(wait_until([&] { return xds_entries(path).size() >= 2; }, 20s)) << server.process().log();
    const auto entries = xds_entries(path);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0]["version"], "v1");
    EXPECT_EQ(entries[0]["outcome"], "applied");
    EXPECT_EQ(entries[0]["actor"]["peer"], cp.address());
    ASSERT_EQ(entries[0]["changes"]["added"].size(), 1u) << entries[0].dump();
    const auto& v2 = entries[1];
    EXPECT_EQ(v2["version"], "v2");
    ASSERT_EQ(v2["changes"]["changed"].size(), 1u) << v2.dump();
    const auto& user = v2["changes"]["changed"].begin().value();
    EXPECT_NE(v2["changes"]["changed"].begin().key().find("user"), std::string::npos) << v2.dump();
    EXPECT_EQ(user["old"]["requests_per_unit"], 5);
    EXPECT_EQ(user["new"]["requests_per_unit"], 7);
    EXPECT_EQ(user["new"]["unit"], "hour");
    EXPECT_EQ(v2["changes"]["added"].size(), 1u);
    EXPECT_NE(v2["digest"], entries[0]["digest"]);
}

}  // namespace
}  // namespace ratelimitd::test::grpc_xds_audit_test
