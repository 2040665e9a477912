// AuditTrail: entries as JSON lines, the bounded ring, the since/limit page, the
// file sink (opened for appending, refused with its path and reason, reopened after a rotation).
#include "ratelimitd/audit/audit_trail.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace ratelimitd::audit {
namespace {

using json = nlohmann::ordered_json;

std::vector<std::string> lines_of(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

std::string scratch_file(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / ("audit_trail_test." + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return (dir / name).string();
}

TEST(AuditTrail, TimesAreRfc3339UtcWithMilliseconds) {
    EXPECT_EQ(AuditTrail::rfc3339(0), "1970-01-01T00:00:00.000Z");
    EXPECT_EQ(AuditTrail::rfc3339(1'796'217'605'123), "2026-12-02T13:20:05.123Z");
}

TEST(AuditTrail, AnEntryIsOneJsonLineWithTimeIdEventActorAndItsFields) {
    AuditTrail trail;
    trail.record("reset", Actor{"10.0.0.7", true}, {{"policy", "api"}, {"tenant", "t1"}});
    trail.record("config_reload", Actor{}, {{"outcome", "applied"}});
    const auto page = trail.since(-1, 10);
    ASSERT_EQ(page.entries.size(), 2u);
    const auto first = json::parse(page.entries[0].line);
    EXPECT_EQ(first["id"], 1);
    EXPECT_EQ(first["event"], "reset");
    EXPECT_EQ(first["actor"], json({{"peer", "10.0.0.7"}, {"token", true}}));
    EXPECT_EQ(first["policy"], "api");
    EXPECT_EQ(first["time"], AuditTrail::rfc3339(page.entries[0].epoch_ms));
    const auto second = json::parse(page.entries[1].line);
    EXPECT_EQ(second["id"], 2);
    EXPECT_TRUE(second["actor"]["peer"].is_null());
    EXPECT_EQ(second["actor"]["token"], false);
    // The order of the first keys is the shape documented in docs/operations.md.
    EXPECT_EQ(page.entries[1].line.rfind("{\"time\":", 0), 0u);
}

TEST(AuditTrail, TheRingKeepsOnlyTheLastEntries) {
    AuditTrail trail(3);
    for (int i = 0; i < 5; ++i) trail.record("reset", Actor{}, {{"n", i}});
    const auto page = trail.since(-1, 10);
    EXPECT_EQ(page.kept, 3u);
    ASSERT_EQ(page.entries.size(), 3u);
    EXPECT_EQ(page.entries.front().id, 3u);
    EXPECT_EQ(page.entries.back().id, 5u);
    EXPECT_FALSE(page.more);
}

TEST(AuditTrail, APageHoldsTheEntriesAfterSinceOldestFirstAtMostLimit) {
    AuditTrail trail;
    for (int i = 0; i < 5; ++i) trail.record("reset", Actor{}, {{"n", i}});
    auto page = trail.since(-1, 2);
    ASSERT_EQ(page.entries.size(), 2u);
    EXPECT_EQ(page.entries[0].id, 1u);
    EXPECT_TRUE(page.more);
    const auto all = trail.since(-1, 10);
    // Nothing is after the newest entry's time; everything is after a time before the first.
    EXPECT_TRUE(trail.since(all.entries.back().epoch_ms, 10).entries.empty());
    EXPECT_EQ(trail.since(all.entries.front().epoch_ms - 1, 10).entries.size(), 5u);
}

TEST(AuditTrail, WritesEachEntryAsALineAppendedToTheFile) {
    const auto path = scratch_file("append.log");
    std::ofstream(path) << "an older line\n";
    AuditTrail trail;
    ASSERT_TRUE(trail.open(path).has_value());
    trail.record("reset", Actor{"::1", false}, {{"tenant", "t"}});
    trail.record("refund", Actor{"::1", false}, {{"units", 3}});
    const auto lines = lines_of(path);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "an older line");
    EXPECT_EQ(json::parse(lines[1])["event"], "reset");
    EXPECT_EQ(json::parse(lines[2])["units"], 3);
}

TEST(AuditTrail, APathThatCannotBeOpenedIsRefusedNamingItAndWhy) {
    AuditTrail trail;
    const auto opened = trail.open("/nonexistent-directory-for-audit/audit.log");
    ASSERT_FALSE(opened.has_value());
    EXPECT_EQ(opened.error().detail,
              "audit_log: cannot open /nonexistent-directory-for-audit/audit.log for appending: No such file or "
              "directory");
}

TEST(AuditTrail, ReopenFollowsARotatedFile) {
    const auto path = scratch_file("rotated.log");
    std::filesystem::remove(path);
    AuditTrail trail;
    ASSERT_TRUE(trail.open(path).has_value());
    trail.record("reset", Actor{}, {});
    std::filesystem::rename(path, path + ".1");  // what logrotate does before its SIGHUP
    trail.record("refund", Actor{}, {});
    ASSERT_TRUE(trail.reopen().has_value());
    trail.record("config_reload", Actor{}, {});
    EXPECT_EQ(lines_of(path + ".1").size(), 2u);
    const auto fresh = lines_of(path);
    ASSERT_EQ(fresh.size(), 1u);
    EXPECT_EQ(json::parse(fresh[0])["event"], "config_reload");
}

TEST(AuditTrail, AdminCallsAreCoalescedPerPeerDoorAndOutcome) {
    AuditTrail trail;
    for (int i = 0; i < 50; ++i) trail.admin_call(Actor{"192.0.2.9", false}, "/v1/peek", "GET", 401);
    trail.admin_call(Actor{"192.0.2.9", true}, "/v1/peek", "GET", 0);
    const auto page = trail.since(-1, 100);
    ASSERT_EQ(page.entries.size(), 2u);
    const auto refused = json::parse(page.entries[0].line);
    EXPECT_EQ(refused["event"], "admin_refused");
    EXPECT_EQ(refused["status"], 401);
    EXPECT_EQ(refused["door"], "/v1/peek");
    EXPECT_EQ(json::parse(page.entries[1].line)["event"], "admin_call");
}

}  // namespace
}  // namespace ratelimitd::audit
