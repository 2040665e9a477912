// The audit trail against the real binary (issue 38, docs/operations.md): one JSON line per config
// load and reload (file change, SIGHUP, refused) with old and new numbers, per reset and per
// refund, admin calls coalesced, to a file or stderr; GET /v1/audit for admins only, bounded,
// without Redis work; and never a secret in either.
#include "support/http_client.hpp"
#include "support/non_loopback_address.hpp"
#include "support/one_request.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::test::audit_trail_test {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

const std::string config = R"(
policies:
  api: { algorithm: fixed_window, limit: 10, window: 60s }
  login: { algorithm: token_bucket, limit: 5, window: 1m, burst: 8 }
)";
const std::string changed_config = R"(
policies:
  api: { algorithm: fixed_window, limit: 20, window: 60s }
  exports: { algorithm: sliding_log, limit: 3, window: 1h }
)";

std::string audit_path() {
    static std::atomic<int> n{0};
    return scratch_dir() + "/audit-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".log";
}

std::string text_of(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every line of the audit file, parsed (a line that is not JSON fails the test).
std::vector<json> entries_in(const std::string& path, const std::string& event = "") {
    std::vector<json> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        auto entry = json::parse(line, nullptr, false);
        EXPECT_FALSE(entry.is_discarded()) << line;
        if (event.empty() || entry.value("event", "") == event) out.push_back(std::move(entry));
    }
    return out;
}

// Waits until the file holds `count` entries of `event`; returns them.
std::vector<json> await_entries(const std::string& path, const std::string& event, std::size_t count) {
    wait_until([&] { return entries_in(path, event).size() >= count; }, 20s);
    return entries_in(path, event);
}

HttpResponse post_json(HttpClient& c, const std::string& target, const json& body,
                       const std::map<std::string, std::string>& headers = {}) {
    auto with_type = headers;
    with_type["Content-Type"] = "application/json";
    return c.post(target, body.dump(), with_type);
}

TEST(AuditTrail, TheStartAndASighupReloadWriteOneEntryEachNamingOldAndNewNumbers) {
    const auto path = audit_path();
    Ratelimitd server(config, "", {"--audit-log", path, "--watch-config", "off"});
    const auto start = await_entries(path, "config_load", 1);
    ASSERT_EQ(start.size(), 1u) << text_of(path);
    EXPECT_EQ(start[0]["source"], "start");
    EXPECT_EQ(start[0]["outcome"], "applied");
    EXPECT_EQ(start[0]["changes"]["added"]["api"]["limit"], 10);
    EXPECT_EQ(start[0]["changes"]["added"]["login"]["burst"], 8);

    server.write_config(changed_config);
    server.process().signal(SIGHUP);
    const auto reloads = await_entries(path, "config_reload", 1);
    ASSERT_EQ(reloads.size(), 1u) << text_of(path);
    const auto& r = reloads[0];
    EXPECT_EQ(r["source"], "sighup");
    EXPECT_EQ(r["outcome"], "applied");
    EXPECT_EQ(r["file"], server.config_path());
    EXPECT_TRUE(r["actor"]["peer"].is_null());
    EXPECT_EQ(r["actor"]["token"], false);
    EXPECT_EQ(r["changes"]["changed"]["api"]["old"]["limit"], 10);
    EXPECT_EQ(r["changes"]["changed"]["api"]["new"]["limit"], 20);
    EXPECT_EQ(r["changes"]["removed"]["login"]["limit"], 5);
    EXPECT_EQ(r["changes"]["added"]["exports"]["window"], "1h");
    EXPECT_EQ(r["changes"]["changed"].size(), 1u);
    // The digest is the SHA-256 of the file's bytes, as /v1/policies shows it.
    HttpClient c(server.port());
    const auto policies = json::parse(c.get("/v1/policies").body);
    EXPECT_EQ(r["digest"], "sha256:" + policies["sha256"].get<std::string>());
    // The time is RFC 3339 UTC.
    EXPECT_EQ(r["time"].get<std::string>().size(), std::string("2026-12-02T13:20:05.123Z").size());
    EXPECT_EQ(r["time"].get<std::string>().back(), 'Z');
}

// An `rlqs:` rule changed, added or removed by a reload is named as a policy is (docs/rlqs.md).
TEST(AuditTrail, AReloadNamesTheRlqsRulesItChanged) {
    const std::string rlqs_before = R"(
rlqs:
  web:
    tenants: { match: { tenant: "t-*" }, limit: 600, window: 1m }
    blocked: { match: { kind: blocked }, blanket: deny_all }
)";
    const std::string rlqs_after = R"(
rlqs:
  web:
    tenants: { match: { tenant: "t-*" }, limit: 300, window: 1m, fallback: deny }
  mobile:
    all: { limit: 5, window: 1s, shadow: true }
)";
    const auto path = audit_path();
    Ratelimitd server(rlqs_before, "", {"--audit-log", path, "--watch-config", "off"});
    const auto start = await_entries(path, "config_load", 1);
    ASSERT_EQ(start.size(), 1u) << text_of(path);
    EXPECT_EQ(start[0]["changes"]["added"]["rlqs:web/tenants"]["limit"], 600);
    EXPECT_EQ(start[0]["changes"]["added"]["rlqs:web/blocked"]["blanket"], "deny_all");

    server.write_config(rlqs_after);
    server.process().signal(SIGHUP);
    const auto reloads = await_entries(path, "config_reload", 1);
    ASSERT_EQ(reloads.size(), 1u) << text_of(path);
    const auto& changes = reloads[0]["changes"];
    EXPECT_EQ(changes["changed"]["rlqs:web/tenants"]["old"]["limit"], 600);
    EXPECT_EQ(changes["changed"]["rlqs:web/tenants"]["new"]["limit"], 300);
    EXPECT_EQ(changes["changed"]["rlqs:web/tenants"]["old"]["fallback"], "keep_last");
    EXPECT_EQ(changes["changed"]["rlqs:web/tenants"]["new"]["fallback"], "deny");
    EXPECT_EQ(changes["removed"]["rlqs:web/blocked"]["blanket"], "deny_all");
    EXPECT_EQ(changes["added"]["rlqs:mobile/all"]["shadow"], true);
    EXPECT_EQ(changes["changed"].size(), 1u);
}

// logrotate moves the file, then sends SIGHUP: the entries go on in a new file of the same name.
TEST(AuditTrail, SighupReopensARotatedAuditLog) {
    const auto path = audit_path();
    Ratelimitd server(config, "", {"--audit-log", path, "--watch-config", "off"});
    ASSERT_EQ(await_entries(path, "config_load", 1).size(), 1u);
    ASSERT_EQ(std::rename(path.c_str(), (path + ".1").c_str()), 0);
    server.process().signal(SIGHUP);
    const auto reloads = await_entries(path, "config_reload", 1);
    ASSERT_EQ(reloads.size(), 1u) << server.process().log();
    EXPECT_EQ(reloads[0]["outcome"], "applied");
    EXPECT_TRUE(reloads[0]["changes"]["changed"].empty());
    EXPECT_EQ(entries_in(path + ".1").size(), 1u);
}

TEST(AuditTrail, AFileChangedOnDiskIsAuditedAsSuch) {
    const auto path = audit_path();
    Ratelimitd server(config, "", {"--audit-log", path});
    await_entries(path, "config_load", 1);
    server.write_config(changed_config);
    const auto reloads = await_entries(path, "config_reload", 1);
    ASSERT_EQ(reloads.size(), 1u) << text_of(path) << server.process().log();
    EXPECT_EQ(reloads[0]["source"], "file_change");
    EXPECT_EQ(reloads[0]["changes"]["changed"]["api"]["new"]["limit"], 20);
}

TEST(AuditTrail, ARefusedReloadWritesOneEntryWithTheReason) {
    const auto path = audit_path();
    Ratelimitd server(config, "", {"--audit-log", path, "--watch-config", "off"});
    await_entries(path, "config_load", 1);
    server.write_config("policies:\n  api: { algorithm: fixed_window, limit: 10, window: 60 }\n");
    server.process().signal(SIGHUP);
    const auto reloads = await_entries(path, "config_reload", 1);
    ASSERT_EQ(reloads.size(), 1u) << text_of(path);
    EXPECT_EQ(reloads[0]["outcome"], "refused");
    EXPECT_EQ(reloads[0]["source"], "sighup");
    EXPECT_NE(reloads[0]["reason"].get<std::string>().find("policies.api.window"), std::string::npos)
        << reloads[0].dump();
    EXPECT_FALSE(reloads[0].contains("changes"));
    // The old config keeps serving.
    HttpClient c(server.port());
    EXPECT_EQ(json::parse(c.get("/v1/policies").body)["policies"]["login"]["limit"], 5);
}

TEST(AuditTrail, ResetsAndRefundsAreAuditedWithPolicyTenantScopeUnitsAndPeer) {
    const auto path = audit_path();
    Ratelimitd server(config, "", {"--audit-log", path});
    HttpClient c(server.port());
    ASSERT_EQ(post_json(c, "/v1/check", {{"policy", "api"}, {"tenant", "acme"}, {"cost", 4}}).status, 200);
    ASSERT_EQ(post_json(c, "/v1/report", {{"policy", "api"}, {"tenant", "acme"}, {"cost", -3}}).status, 200);
    ASSERT_EQ(post_json(c, "/v1/reset", {{"policy", "api"}, {"tenant", "acme"}, {"scope", "exports"}}).status, 200);
    // A reset the road refuses is audited too, with its error.
    ASSERT_EQ(post_json(c, "/v1/reset", {{"policy", "nope"}, {"tenant", "acme"}}).status, 400);

    const auto refunds = await_entries(path, "refund", 1);
    ASSERT_EQ(refunds.size(), 1u) << text_of(path);
    EXPECT_EQ(refunds[0]["policy"], "api");
    EXPECT_EQ(refunds[0]["tenant"], "acme");
    EXPECT_EQ(refunds[0]["scope"], "global");
    EXPECT_EQ(refunds[0]["units"], 3);
    EXPECT_EQ(refunds[0]["outcome"], "refunded");
    EXPECT_EQ(refunds[0]["actor"], json({{"peer", "127.0.0.1"}, {"token", false}}));

    const auto resets = await_entries(path, "reset", 2);
    ASSERT_EQ(resets.size(), 2u) << text_of(path);
    EXPECT_EQ(resets[0]["door"], "/v1/reset");
    EXPECT_EQ(resets[0]["policy"], "api");
    EXPECT_EQ(resets[0]["tenant"], "acme");
    EXPECT_EQ(resets[0]["scope"], "exports");
    EXPECT_EQ(resets[0]["actor"]["peer"], "127.0.0.1");
    EXPECT_EQ(resets[1]["outcome"], "unknown_policy");
    EXPECT_EQ(resets[1]["status"], 400);
    // A check is no audited act.
    EXPECT_EQ(text_of(path).find("\"/v1/check\""), std::string::npos);
}

TEST(AuditTrail, NoSecretInTheAuditLogNorInTheAnswer) {
    const std::string admin_token = "adm1n-T0ken-must-not-leak-aud1t";
    const std::string wrong_token = "wr0ng-T0ken-must-not-leak-aud1t";
    const std::string hash_secret = "hash-S3cret-must-not-leak-aud1t";
    const std::string redis_password = "redis-Passw0rd-must-not-leak-aud1t";
    RedisServer redis(redis_password);
    const auto path = audit_path();
    const std::string with_secrets = config + "hash_secret: \"" + hash_secret + "\"\n";
    Ratelimitd server(with_secrets, "", {"--audit-log", path, "--watch-config", "off"},
                      {"RATELIMITD_ADMIN_TOKEN=" + admin_token, "RATELIMITD_REDIS_URL=" + redis.url()});
    HttpClient c(server.port());
    const std::map<std::string, std::string> admin{{"Authorization", "Bearer " + admin_token}};
    const std::map<std::string, std::string> wrong{{"Authorization", "Bearer " + wrong_token}};
    ASSERT_EQ(post_json(c, "/v1/report", {{"policy", "api"}, {"tenant", "t"}, {"cost", -1}}, admin).status, 200);
    ASSERT_EQ(post_json(c, "/v1/reset", {{"policy", "api"}, {"tenant", "t"}}, admin).status, 200);
    EXPECT_EQ(post_json(c, "/v1/reset", {{"policy", "api"}, {"tenant", "t"}}, wrong).status, 401);
    EXPECT_EQ(c.get("/v1/audit", wrong).status, 401);
    // A reload with the secrets in the new file too, and one refused.
    server.write_config(changed_config + "hash_secret: \"" + hash_secret + "\"\nredis: \"" + redis.url() + "\"\n");
    server.process().signal(SIGHUP);
    await_entries(path, "config_reload", 1);
    server.write_config("hash_secret: \"short\"\nredis: \"" + redis.url() + "x\"\npolicies: {}\n");
    server.process().signal(SIGHUP);
    const auto reloads = await_entries(path, "config_reload", 2);
    ASSERT_EQ(reloads.size(), 2u) << text_of(path);
    EXPECT_EQ(reloads[1]["outcome"], "refused");

    const auto answer = c.get("/v1/audit?limit=1000", admin);
    ASSERT_EQ(answer.status, 200);
    const std::string log = text_of(path);
    for (const auto& event : {"config_load", "config_reload", "refund", "reset", "admin_call", "admin_refused"}) {
        EXPECT_NE(log.find(std::string("\"event\":\"") + event + "\""), std::string::npos) << event << "\n" << log;
    }
    for (const std::string& secret : {admin_token, wrong_token, hash_secret, redis_password}) {
        for (const std::string& needle : {secret, secret.substr(0, 12)}) {
            EXPECT_EQ(log.find(needle), std::string::npos) << needle << " in\n" << log;
            EXPECT_EQ(answer.body.find(needle), std::string::npos) << needle << " in\n" << answer.body;
        }
    }
}

TEST(AuditTrail, RefusedAdminCallsAreCoalescedAndTokenUseIsNamed) {
    const std::string admin_token = "admin-token-for-the-audit-tests-01";
    const auto path = audit_path();
    Ratelimitd server(config, "", {"--audit-log", path}, {"RATELIMITD_ADMIN_TOKEN=" + admin_token});
    HttpClient c(server.port());
    for (int i = 0; i < 200; ++i) ASSERT_EQ(c.get("/v1/peek?policy=api&tenant=t").status, 401);
    ASSERT_EQ(c.get("/v1/peek?policy=api&tenant=t", {{"Authorization", "Bearer " + admin_token}}).status, 200);
    const auto allowed = await_entries(path, "admin_call", 1);
    ASSERT_EQ(allowed.size(), 1u) << text_of(path);
    EXPECT_EQ(allowed[0]["door"], "/v1/peek");
    EXPECT_EQ(allowed[0]["actor"], json({{"peer", "127.0.0.1"}, {"token", true}}));
    // 200 refused calls of one peer on one door within the minute: one line.
    const auto refused = entries_in(path, "admin_refused");
    ASSERT_EQ(refused.size(), 1u) << text_of(path);
    EXPECT_EQ(refused[0]["status"], 401);
    EXPECT_EQ(refused[0]["actor"]["token"], false);
}

TEST(AuditTrail, TheKeptEntriesAreBoundedAndTheAnswerToo) {
    Ratelimitd server(config, "");
    HttpClient c(server.port());
    for (int i = 0; i < 1005; ++i) {
        ASSERT_EQ(post_json(c, "/v1/reset", {{"policy", "api"}, {"tenant", "t" + std::to_string(i)}}).status, 200);
    }
    const auto all = json::parse(c.get("/v1/audit?limit=1000").body);
    EXPECT_EQ(all["kept"], 1000);
    EXPECT_EQ(all["capacity"], 1000);
    ASSERT_EQ(all["entries"].size(), 1000u);
    EXPECT_FALSE(all["more"]);
    // The oldest went: the start's entry and the first resets. The newest is this very call's.
    EXPECT_EQ(all["entries"][999]["door"], "/v1/audit");
    EXPECT_EQ(all["entries"][998]["tenant"], "t1004");
    EXPECT_GT(all["entries"].front()["id"].get<int>(), 1);
    const auto page = json::parse(c.get("/v1/audit?limit=2").body);
    EXPECT_EQ(page["entries"].size(), 2u);
    EXPECT_TRUE(page["more"]);
    // since: only what came after that time (RFC 3339 strings of one format sort as times).
    const auto since = all["entries"][990]["time"].get<std::string>();
    std::size_t later = 0;
    for (const auto& e : all["entries"]) later += e["time"].get<std::string>() > since ? 1 : 0;
    const auto after = json::parse(c.get("/v1/audit?since=" + since).body);
    EXPECT_EQ(after["entries"].size(), later);
    EXPECT_LT(later, 10u);
    for (const auto& e : after["entries"]) EXPECT_GT(e["time"].get<std::string>(), since);
}

TEST(AuditTrail, WithoutAuditLogNothingIsWrittenButTheEntriesAreKept) {
    Ratelimitd server(config, "");
    HttpClient c(server.port());
    const auto all = json::parse(c.get("/v1/audit").body);
    // The start's load, and this very call (from loopback, without a token).
    ASSERT_EQ(all["entries"].size(), 2u) << all.dump();
    EXPECT_EQ(all["entries"][0]["event"], "config_load");
    EXPECT_EQ(all["entries"][1]["event"], "admin_call");
    EXPECT_EQ(all["entries"][1]["door"], "/v1/audit");
    EXPECT_EQ(server.process().log().find("\"event\":"), std::string::npos) << server.process().log();
}

TEST(AuditTrail, ToStderrBesideTheLog) {
    Ratelimitd server(config, "", {"--watch-config", "off"}, {"RATELIMITD_AUDIT_LOG=stderr"});
    EXPECT_FALSE(server.process().wait_for_log("\"event\":\"config_load\"", 10s).empty()) << server.process().log();
    server.write_config(changed_config);
    server.process().signal(SIGHUP);
    const auto line = server.process().wait_for_log("\"event\":\"config_reload\"", 20s);
    ASSERT_FALSE(line.empty()) << server.process().log();
    const auto entry = json::parse(line);
    EXPECT_EQ(entry["changes"]["changed"]["api"]["new"]["limit"], 20);
}

TEST(AuditTrail, AnAuditLogThatCannotBeOpenedRefusesTheStartNamingItAndWhy) {
    const std::string config_path = scratch_dir() + "/audit-refusal.yaml";
    std::ofstream(config_path) << config;
    const std::string bad = scratch_dir() + "/no-such-directory/audit.log";
    Child child({RATELIMITD_BINARY, "--config", config_path, "--listen", "127.0.0.1:0", "--audit-log", bad},
                scratch_dir() + "/audit-refusal.log");
    EXPECT_EQ(child.wait(process_start_bound), 1);
    EXPECT_NE(child.log().find("audit_log: cannot open " + bad + " for appending: No such file or directory"),
              std::string::npos)
        << child.log();
}

// --- GET /v1/audit: who may call it, its input, its Redis cost ---------------------------------

TEST(AuditEndpoint, WithoutATokenANonLoopbackPeerIsRefusedAndItsCallAudited) {
    const auto remote = non_loopback_address();
    if (!remote) GTEST_SKIP() << "this machine has no non-loopback IPv4 address to connect from";
    const auto path = audit_path();
    Ratelimitd server(config, "", {"--listen", "0.0.0.0:0", "--audit-log", path});
    const auto [status, body] = request_to(*remote, server.port(), get_wire("/v1/audit"));
    EXPECT_EQ(status, 403);
    EXPECT_NE(body.find(R"("error":"admin_disabled")"), std::string::npos) << body;
    EXPECT_EQ(body.find("config_load"), std::string::npos) << body;
    const auto refused = await_entries(path, "admin_refused", 1);
    ASSERT_EQ(refused.size(), 1u) << text_of(path);
    EXPECT_EQ(refused[0]["door"], "/v1/audit");
    EXPECT_EQ(refused[0]["status"], 403);
    EXPECT_EQ(refused[0]["actor"]["peer"], *remote);
    EXPECT_EQ(request_to("127.0.0.1", server.port(), get_wire("/v1/audit")).status, 200);
}

TEST(AuditEndpoint, TheTokenIsNeededInputIsCheckedAndNoRedisWorkIsDone) {
    const std::string admin_token = "admin-token-for-the-audit-tests-02";
    RedisServer redis;
    Ratelimitd server(config, redis.url(), {}, {"RATELIMITD_ADMIN_TOKEN=" + admin_token});
    HttpClient c(server.port());
    const std::map<std::string, std::string> admin{{"Authorization", "Bearer " + admin_token}};
    const auto none = c.get("/v1/audit");
    EXPECT_EQ(none.status, 401);
    EXPECT_EQ(none.body.find("config_load"), std::string::npos);
    const auto bad_since = c.get("/v1/audit?since=yesterday", admin);
    EXPECT_EQ(bad_since.status, 400);
    EXPECT_NE(bad_since.body.find("since: expected an RFC 3339 time"), std::string::npos) << bad_since.body;
    const auto too_many = c.get("/v1/audit?limit=1001", admin);
    EXPECT_EQ(too_many.status, 400);
    EXPECT_NE(too_many.body.find("limit: expected an integer 1..1000"), std::string::npos) << too_many.body;
    EXPECT_EQ(c.get("/v1/audit?since=0&since=1", admin).status, 400);
    // Redis stopped: a call that needed it would wait out the store deadline and fail; this
    // one answers at once.
    redis.pause();
    const auto paused = c.get("/v1/audit?since=2020-01-01T00:00:00Z", admin);
    redis.resume();
    EXPECT_EQ(paused.status, 200) << paused.body;
    EXPECT_NE(paused.body.find("\"event\":\"config_load\""), std::string::npos) << paused.body;
}

}  // namespace
}  // namespace ratelimitd::test::audit_trail_test
