// `ratelimitd simulate` on logs generated here with known answers: the real binary's JSON
// summary against the hand-counted answer and against the server's own /v1/auth handler fed
// the same requests on a manual clock (simulate_support.hpp: the binary has no manual clock,
// so the server's Router runs in process on an embedded store whose time the test sets).
#include "simulate_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace ratelimitd::test::simulate_replay_test {
namespace {

const std::int64_t noon = utc_ms(2026, 12, 1, 12, 0, 0);

const char* const login_config = R"(
policies:
  login: { algorithm: fixed_window, limit: 5, window: 1m }
  api: { algorithm: token_bucket, limit: 1000, window: 1m }
routes:
  - { path: /login, policy: login }
  - { path: "/v1/*", policy: api }
)";

std::string log_of(const std::vector<Event>& events, bool with_tenant = false) {
    std::string text;
    for (const auto& e : events) text += nginx_line(e, with_tenant);
    return text;
}

void add(std::vector<Event>& out, int n, std::int64_t start, std::int64_t step_ms, const std::string& client,
         const std::string& uri, const std::string& tenant = "") {
    for (int i = 0; i < n; ++i) out.push_back({start + i * step_ms, client, "POST", uri, tenant});
}

// Two clients over two windows of a login limit of 5 per minute: A sends 8 then 7, B 3 then
// 6; the windows are a minute from each client's first request.
std::vector<Event> login_events() {
    std::vector<Event> e;
    add(e, 8, noon, 1000, "192.0.2.1", "/login");                // A: 3 denied, first at 12:00:05
    add(e, 3, noon + 10'000, 1000, "192.0.2.2", "/login");       // B: none denied
    add(e, 7, noon + 90'000, 1000, "192.0.2.1", "/login");       // A's second window: 2 denied
    add(e, 6, noon + 100'000, 1000, "192.0.2.2", "/login");      // B's second window: 1 denied, at 12:01:45
    add(e, 4, noon + 30'000, 1000, "192.0.2.9", "/v1/items");    // under the api limit
    std::stable_sort(e.begin(), e.end(), [](const Event& a, const Event& b) { return a.t_ms < b.t_ms; });
    return e;
}

TEST(SimulateReplay, LoginLimitOverTwoWindowsAndTwoClients) {
    const auto events = login_events();
    const auto config = write_file("login.yaml", login_config);
    const auto log = write_file("login.log", log_of(events));
    const SimRun run = simulate("--config " + config + " --log " + log + " --json");
    ASSERT_EQ(run.code, 0) << run.err;
    const auto j = run.json();
    EXPECT_EQ(j["lines"], 28);
    EXPECT_EQ(j["requests"], 28);
    EXPECT_EQ(j["unparsed"], 0);
    EXPECT_EQ(j["policies"]["login"], nlohmann::json({{"checked", 24}, {"denied", 6}, {"tenants_denied", 2}}));
    EXPECT_EQ(j["policies"]["api"], nlohmann::json({{"checked", 4}, {"denied", 0}, {"tenants_denied", 0}}));
    ASSERT_EQ(j["top_denied"].size(), 2u) << j.dump();
    EXPECT_EQ(j["top_denied"][0], nlohmann::json({{"policy", "login"}, {"tenant", "ip:192.0.2.1"}, {"denied", 5},
                                                  {"first_denied", "2026-12-01T12:00:05Z"}}));
    EXPECT_EQ(j["top_denied"][1], nlohmann::json({{"policy", "login"}, {"tenant", "ip:192.0.2.2"}, {"denied", 1},
                                                  {"first_denied", "2026-12-01T12:01:45Z"}}));
    // Denials by the minute they were logged in: 3 in 12:00, 3 in 12:01.
    ASSERT_EQ(j["per_minute"].size(), 2u) << j["per_minute"].dump();
    EXPECT_EQ(j["per_minute"][0]["minute"], "2026-12-01T12:00:00Z");
    EXPECT_EQ(j["per_minute"][0]["denied"]["login"], 3);
    EXPECT_EQ(j["per_minute"][1]["denied"]["login"], 3);
    EXPECT_EQ(j["per_minute"][0]["requests"].get<int>() + j["per_minute"][1]["requests"].get<int>(), 28);
    EXPECT_FALSE(j.contains("baseline"));
    EXPECT_TRUE(run.err.empty()) << run.err;

    ServerOracle server(login_config);
    EXPECT_EQ(replay_on_server(server, events), 6);
    expect_same_as_server(j, server);
}

TEST(SimulateReplay, TheTextSummaryIsTheDefault) {
    const auto config = write_file("login-text.yaml", login_config);
    const auto log = write_file("login-text.log", log_of(login_events()));
    const SimRun run = simulate("--config " + config + " --log " + log);
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_NE(run.out.find("28 lines, 28 requests (6 denied, 21.43%), 0 unparsed"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("ip:192.0.2.1"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("2026-12-01T12:00:05Z"), std::string::npos) << run.out;
}

// A route of two limits decided as one: 10 a minute per tenant (X-Tenant-Id) and 4 a minute
// per client address. A denial by one charges neither.
TEST(SimulateReplay, LayeredLimitsAsTheServerDecidesThem) {
    const std::string yaml = R"(
policies:
  per-tenant: { algorithm: fixed_window, limit: 10, window: 1m }
  per-ip: { algorithm: fixed_window, limit: 4, window: 1m }
identity:
  - { name: tenant, header: X-Tenant-Id }
routes:
  - path: "/v1/*"
    limits:
      - { policy: per-tenant, identity: tenant }
      - { policy: per-ip, identity: client_ip }
)";
    std::vector<Event> events;
    // Tenant acme from three addresses, five rounds of one request each, within a minute.
    for (int i = 0; i < 5; ++i) {
        for (const char* ip : {"198.51.100.1", "198.51.100.2", "198.51.100.3"}) {
            events.push_back({noon + i * 2000 + static_cast<int>(events.size()), ip, "GET", "/v1/orders", "acme"});
        }
    }
    // Another tenant from one address: 4 allowed, then per-ip denies 2.
    add(events, 6, noon + 20'000, 500, "198.51.100.7", "/v1/orders", "globex");
    const auto config = write_file("layered.yaml", yaml);
    const auto log = write_file("layered.log", log_of(events, true));
    const SimRun run = simulate("--config " + config + " --log " + log + " --json --nginx-format '" + tenant_format + "'");
    ASSERT_EQ(run.code, 0) << run.err;
    const auto j = run.json();
    EXPECT_EQ(j["requests"], 21);

    ServerOracle server(yaml);
    const int denied = replay_on_server(server, events);
    expect_same_as_server(j, server);
    // By hand: acme's rounds 1-3 admit 9 (per-tenant 9, each ip 3); round 4: the first address
    // admitted (acme 10, ip 4), the other two denied by per-tenant; round 5: the first denied by
    // per-ip and per-tenant, the others by per-tenant. globex: 2 denied by per-ip.
    EXPECT_EQ(denied, 7);
    EXPECT_EQ(j["policies"]["per-tenant"]["denied"], 5);
    EXPECT_EQ(j["policies"]["per-tenant"]["tenants_denied"], 1);
    EXPECT_EQ(j["policies"]["per-ip"]["denied"], 3);
    EXPECT_EQ(j["policies"]["per-ip"]["tenants_denied"], 2);
}

// A token bucket of burst 3 refilling one token per 10 s.
TEST(SimulateReplay, TokenBucketRefillsOverTheLogsTime) {
    const std::string yaml = R"(
policies:
  bucket: { algorithm: token_bucket, limit: 6, window: 1m, burst: 3 }
default_policy: bucket
)";
    std::vector<Event> events;
    add(events, 5, noon, 0, "203.0.113.5", "/x");            // 3 admitted, 2 denied
    add(events, 1, noon + 10'000, 0, "203.0.113.5", "/x");   // one token back: admitted
    add(events, 2, noon + 15'000, 0, "203.0.113.5", "/x");   // half a token: both denied
    // 30 s since the last admission (a denial changes nothing): 3 tokens, the burst: 3 admitted, 1 denied.
    add(events, 4, noon + 40'000, 0, "203.0.113.5", "/x");
    const auto config = write_file("bucket.yaml", yaml);
    const auto log = write_file("bucket.log", log_of(events));
    const SimRun run = simulate("--config " + config + " --log " + log + " --json");
    ASSERT_EQ(run.code, 0) << run.err;
    const auto j = run.json();
    EXPECT_EQ(j["policies"]["bucket"], nlohmann::json({{"checked", 12}, {"denied", 5}, {"tenants_denied", 1}}));
    EXPECT_EQ(j["top_denied"][0]["denied"], 5);
    EXPECT_EQ(j["top_denied"][0]["first_denied"], "2026-12-01T12:00:00Z");

    ServerOracle server(yaml);
    EXPECT_EQ(replay_on_server(server, events), 5);
    expect_same_as_server(j, server);
}

// A calendar day: 3 a day, counted from midnight UTC. Four requests before midnight and four
// after are one denial each; a rolling 1d window would deny five.
TEST(SimulateReplay, CalendarWindowsRestartAtMidnight) {
    const std::string yaml = R"(
policies:
  daily: { algorithm: fixed_window, limit: 3, window: 1d, align: calendar }
default_policy: daily
)";
    const std::int64_t midnight = utc_ms(2026, 12, 2, 0, 0, 0);
    std::vector<Event> events;
    add(events, 4, midnight - 10'000, 1000, "192.0.2.50", "/report");
    add(events, 4, midnight + 10'000, 1000, "192.0.2.50", "/report");
    const auto config = write_file("calendar.yaml", yaml);
    const auto log = write_file("calendar.log", log_of(events));
    const SimRun run = simulate("--config " + config + " --log " + log + " --json");
    ASSERT_EQ(run.code, 0) << run.err;
    const auto j = run.json();
    EXPECT_EQ(j["policies"]["daily"]["denied"], 2);
    ASSERT_EQ(j["per_minute"].size(), 2u);
    EXPECT_EQ(j["per_minute"][0]["minute"], "2026-12-01T23:59:00Z");
    EXPECT_EQ(j["per_minute"][0]["denied"]["daily"], 1);
    EXPECT_EQ(j["per_minute"][1]["minute"], "2026-12-02T00:00:00Z");
    EXPECT_EQ(j["per_minute"][1]["denied"]["daily"], 1);

    ServerOracle server(yaml);
    EXPECT_EQ(replay_on_server(server, events), 2);
    expect_same_as_server(j, server);
}

// Workers' lines a few seconds out of order are decided at the newest time seen (the clock
// never goes back); a line far behind is counted as late on stderr, and decided the same way.
TEST(SimulateReplay, OutOfOrderLinesAreToleratedAndTheFarOnesReported) {
    std::vector<Event> events;
    for (int s : {0, 3, 1, 4, 2, 5, 6, 8, 7}) events.push_back({noon + s * 1000, "192.0.2.1", "POST", "/login", ""});
    events.push_back({noon - 3'600'000, "192.0.2.1", "POST", "/login", ""});  // an hour behind
    const auto config = write_file("order.yaml", login_config);
    const auto log = write_file("order.log", log_of(events));
    const SimRun run = simulate("--config " + config + " --log " + log + " --json");
    ASSERT_EQ(run.code, 0) << run.err;
    const auto j = run.json();
    EXPECT_EQ(j["policies"]["login"]["denied"], 5);
    // The first denial is the sixth line decided, logged at 12:00:05.
    EXPECT_EQ(j["top_denied"][0]["first_denied"], "2026-12-01T11:00:00Z") << "the late line's own time is kept";
    EXPECT_NE(run.err.find("1 lines were logged more than 5000 ms behind"), std::string::npos) << run.err;

    ServerOracle server(login_config);
    EXPECT_EQ(replay_on_server(server, events), 5);
    expect_same_as_server(j, server);
}

TEST(SimulateReplay, AGzipLogAndStdinGiveTheSameAnswer) {
    const auto config = write_file("gz.yaml", login_config);
    const auto log = write_file("gz.log", log_of(login_events()));
    Child gzip({"/bin/sh", "-c", "gzip -c " + log + " > " + log + ".gz"}, log + ".gzip-log");
    ASSERT_EQ(gzip.wait(30s), 0);
    const SimRun plain = simulate("--config " + config + " --log " + log + " --json");
    const SimRun gz = simulate("--config " + config + " --log " + log + ".gz --json");
    const SimRun piped = simulate("--config " + config + " --log - --json", log + ".gz");
    ASSERT_EQ(gz.code, 0) << gz.err;
    ASSERT_EQ(piped.code, 0) << piped.err;
    EXPECT_EQ(gz.json()["policies"]["login"]["denied"], 6);
    EXPECT_EQ(gz.json(), plain.json());
    EXPECT_EQ(piped.json(), plain.json());
}

TEST(SimulateReplay, GarbageLinesAreCountedAndTheFirstFewShownWithTheirNumbers) {
    auto events = login_events();
    std::string text;
    int garbage = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        text += nginx_line(events[i]);
        if (i % 4 == 1) {
            // Binary junk, a cut line, an empty one, a request line with no URI, a bad date.
            const char* junk[] = {"\x16\x03\x01\x02\x00\x01\xff garbage", "192.0.2.1 - - [01/Dec/2026:12:0",
                                  "", "192.0.2.1 - - [01/Dec/2026:12:00:00 +0000] \"\\x16\\x03\" 400 0 \"-\" \"-\"",
                                  "192.0.2.1 - - [41/Dec/2026:12:00:00 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\""};
            text += std::string(junk[garbage % 5]) + "\n";
            ++garbage;
        }
    }
    const auto config = write_file("garbage.yaml", login_config);
    const auto log = write_file("garbage.log", text);
    const SimRun run = simulate("--config " + config + " --log " + log + " --json");
    ASSERT_EQ(run.code, 0) << run.err;
    const auto j = run.json();
    EXPECT_EQ(j["unparsed"], garbage);
    EXPECT_EQ(j["requests"], 28);
    EXPECT_EQ(j["lines"], 28 + garbage);
    EXPECT_EQ(j["policies"]["login"]["denied"], 6) << "garbage changes nothing";
    // The first garbage line is line 3 of the file; five are shown, then the total.
    EXPECT_NE(run.err.find("line 3 unparsed"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("\\x16\\x03\\x01"), std::string::npos) << "bytes shown escaped: " << run.err;
    std::size_t shown = 0;
    for (auto at = run.err.find("unparsed ("); at != std::string::npos; at = run.err.find("unparsed (", at + 1)) ++shown;
    EXPECT_EQ(shown, 5u) << run.err;
    EXPECT_NE(run.err.find(std::to_string(garbage) + " lines unparsed in all"), std::string::npos) << run.err;
}

TEST(SimulateReplay, ABaselineListsWhoIsNewlyDeniedAndWhoNoLongerIs) {
    // The baseline (in force) allows 7 logins a minute and denies B's API use; the new config
    // allows 5 and lifts the API limit: A is newly denied on login, B no longer on api.
    const std::string baseline_yaml = R"(
policies:
  login: { algorithm: fixed_window, limit: 7, window: 1m }
  api: { algorithm: fixed_window, limit: 2, window: 1m }
routes:
  - { path: /login, policy: login }
  - { path: "/v1/*", policy: api }
)";
    const auto config = write_file("new.yaml", login_config);
    const auto baseline = write_file("old.yaml", baseline_yaml);
    const auto log = write_file("baseline.log", log_of(login_events()));
    const SimRun run = simulate("--config " + config + " --baseline " + baseline + " --log " + log + " --json");
    ASSERT_EQ(run.code, 0) << run.err;
    const auto j = run.json();
    EXPECT_EQ(j["policies"]["login"]["denied"], 6);
    EXPECT_EQ(j["baseline"]["policies"]["login"]["denied"], 1);  // A's 8th in the first window
    EXPECT_EQ(j["baseline"]["policies"]["api"]["denied"], 2);
    EXPECT_EQ(j["baseline"]["lines"], 28);
    EXPECT_EQ(j["newly_denied"], nlohmann::json::parse(R"([{"policy":"login","tenant":"ip:192.0.2.2"}])"));
    EXPECT_EQ(j["no_longer_denied"], nlohmann::json::parse(R"([{"policy":"api","tenant":"ip:192.0.2.9"}])"));
}

TEST(SimulateReplay, AnInvalidConfigIsRefusedBeforeTheLogIsRead) {
    const auto bad = write_file("bad-sim.yaml", "policies:\n  login: { algorithm: leaky, limit: 5, window: 1m }\n");
    const SimRun run = simulate("--config " + bad + " --log /nonexistent/access.log --json");
    EXPECT_EQ(run.code, 1) << run.err;
    EXPECT_NE(run.err.find("policies.login.algorithm"), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("nonexistent"), std::string::npos) << "the log is not opened: " << run.err;
    EXPECT_TRUE(run.out.empty());

    const auto good = write_file("good-sim.yaml", login_config);
    const SimRun baseline = simulate("--config " + good + " --baseline " + bad + " --log /nonexistent/access.log");
    EXPECT_EQ(baseline.code, 1) << baseline.err;
    const SimRun missing = simulate("--config " + good + " --log /nonexistent/access.log");
    EXPECT_EQ(missing.code, 2);
    EXPECT_NE(missing.err.find("cannot open /nonexistent/access.log"), std::string::npos) << missing.err;
    const SimRun unknown = simulate("--config " + good + " --log x --frobnicate 1");
    EXPECT_EQ(unknown.code, 2);
    EXPECT_NE(unknown.err.find("--frobnicate"), std::string::npos) << unknown.err;
}

TEST(SimulateReplay, JsonLinesWithMappedFieldsAndATenantMember) {
    const std::string yaml = R"(
policies:
  per-tenant: { algorithm: sliding_log, limit: 3, window: 1m }
identity:
  - { header: X-Tenant-Id }
default_policy: per-tenant
)";
    std::string text;
    std::vector<Event> events;
    for (int i = 0; i < 5; ++i) {
        Event e{noon + i * 1000, "192.0.2.77", "GET", "/v1/things?page=" + std::to_string(i), i < 4 ? "acme" : ""};
        events.push_back(e);
        nlohmann::json line = {{"ts", noon / 1000.0 + i}, {"req", {{"verb", e.method}, {"path", e.uri}}}, {"ip", e.client}};
        if (!e.tenant.empty()) line["account"] = e.tenant;
        text += line.dump() + "\n";
    }
    text += "{not json\n";
    const auto config = write_file("json.yaml", yaml);
    const auto log = write_file("json.log", text);
    const SimRun run = simulate("--config " + config + " --log " + log +
                             " --format json --time-field ts --method-field req.verb --uri-field req.path"
                             " --client-field ip --tenant-field account --json");
    ASSERT_EQ(run.code, 0) << run.err;
    const auto j = run.json();
    EXPECT_EQ(j["requests"], 5);
    EXPECT_EQ(j["unparsed"], 1);
    EXPECT_EQ(j["top_denied"], nlohmann::json::parse(R"([{"policy":"per-tenant","tenant":"acme","denied":1,
                                                          "first_denied":"2026-12-01T12:00:03Z"}])"));
    ServerOracle server(yaml);
    EXPECT_EQ(replay_on_server(server, events), 1);
    expect_same_as_server(j, server);
}

// The bundled example of docs/simulate.md, exactly as the page runs it.
TEST(SimulateReplay, TheDocumentedExampleRuns) {
    const std::string root = RATELIMITD_SOURCE_DIR;
    const SimRun run = simulate("--config " + root + "/config/example.yaml --log " + root +
                             "/docs/examples/access.log --json");
    ASSERT_EQ(run.code, 0) << run.err;
    const auto j = run.json();
    EXPECT_GT(j["requests"].get<int>(), 100);
    EXPECT_EQ(j["unparsed"], 0);
    EXPECT_GT(j["policies"]["login"]["denied"].get<int>(), 0) << j.dump();
}

}  // namespace
}  // namespace ratelimitd::test::simulate_replay_test
