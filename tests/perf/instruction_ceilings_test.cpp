// Instruction ceilings: user-space instructions (and heap allocations) per request of the
// real ratelimitd binary, counted by callgrind (tests/perf/callgrind_server.hpp). A count is
// deterministic for a given build and request sequence: it does not move with the machine's
// load, so it can fail a change that adds work where a time never could. Every thread of the
// process is counted (the stats and timer threads add a little, in proportion to the seconds
// the requests take under valgrind: the ceilings leave room for it).
//
// Skipped under the sanitizers (their instrumentation is most of the count), in builds without
// NDEBUG (the ceilings are Release figures), and where valgrind is not installed.
//
// Moving a ceiling: run `ctest --test-dir build -R perf.instructions --output-on-failure` on a
// Release build before and after the change; each test prints its figure. A change that adds
// work on purpose raises the ceiling to its new figure plus about 5 %, and says in its commit
// message what the instructions buy; a change that removes work lowers it the same way, so the
// gain is kept. An allocation ceiling sits half an allocation above its figure (allocations
// come whole). bench/callgrind.sh shows where the instructions go (wrk at -c32, beside nginx).
//
// Measured (g++ 12 Release, one keep-alive connection, 8 tenants or keys, 2,000 requests after
// 200 warm-up ones), per request:
//   POST /v1/check, embedded: 22,106 instructions, 1.00 allocations (the key string), after
//     issue 49's second round (rate-limit lines written as wire text in one pass, control bytes
//     looked for 16 at a time, the request moved three times rather than six); 25,317 after
//     its first round (JSON writer runs, one-pass header scan, per-policy RateLimit-Policy
//     members), about 29,500 before both. 22,392 to 22,431 after the fourth round (its verdict
//     moved once into the decision, its tenant and the decision's in a larger inline type).
//     17,741 to 17,949 after the fifth round (22,227 before it): the one-window answer body
//     written in one pass and the constant field lines in one run (-> 19,850), the plan and the
//     decision's names written into the road's call rather than moved into it (-> 18,816), the
//     body parsed into the door's own request (-> 18,161), request ids from a byte-pair table
//     and the answer framed in one growth (-> 18,015), the router's label looked up once.
//     Sixth round (17,741 to 18,082 before it): the router's steps awaited in the session's
//     frame, no router coroutine (-> 16,989 to 17,296); the reported window's numbers
//     formatted once for body and header lines, the status line written with the answer and
//     the answer framed in three copies, X-Request-Id appended in one (-> 16,575 to 16,908);
//     the thread's metric counters found through a one-entry cache, the answer's route, status
//     and time counted in one call, the endpoint found once (-> 16,465 to 16,479); the
//     embedded store's verdict written into the decision's (Store::try_apply_now_into), not
//     built, moved and copy-assigned (-> 16,010 to 16,064).
//     Eighth round (16,054 to 16,347 before it, measured beside it): the answer's numbers
//     written two digits a step, a field name walked once to its colon, the body's strings
//     judged by a table and written straight into the door's request, the key laid out in one
//     buffer, the resolved scope a view, the tenant checked without a string made for its
//     field's name, the heavy hitters' policy found by a one-entry cache, the caches' names
//     compared without string_view's out-of-line compare (-> 14,640 to 14,907, the higher
//     figures at a load of 6 to 7). The issue's goal, <= 15,000, is reached.
//   GET /v1/auth, hashed X-Api-Key: 24,760 to 24,900 instructions, 1.00 allocations (the key
//     string), after the fourth round: the tenant kept in place (policy::TenantText, 48 bytes
//     inline: the hashed identity and the decision's copy of it no longer allocate; 27,446 ->
//     27,221), the original-request and identity headers found by a walk of the fields rather
//     than Beast's ordered index (-> 25,656), the verdict moved once and the identity's digits
//     from a table (-> 25,289), the original-request headers read as views (-> 24,784). 27,081
//     to 27,446 and 3.00 before it (the hashed identity's string, the decision's copy of it,
//     the key string); 35,811 and 8.00 after the first round. The issue's goal, <= 25,000
//     instructions and <= 2 allocations, is reached. 23,413 to 23,641 after the fifth round
//     (the answer's framing is the check's). Sixth round (23,301 before it): no router
//     coroutine (-> 22,741 to 22,758); its answer framed as the check's (-> 22,687); the
//     metrics as the check's (-> 22,454 to 22,461); the verdict written in place
//     (-> 21,851 to 21,934). Eighth round: 21,907 to 22,211 before it, 21,264 to 21,336 after.
#include "perf/callgrind_server.hpp"
#include "support/http_client.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

namespace ratelimitd::test::perf {
namespace {

constexpr const char* config = R"(hash_secret: "perf-test-hash-secret-0123456789"
policies:
  roomy: { algorithm: token_bucket, limit: 1000000, window: 24h }
identity:
  - { header: X-Api-Key, hash: true }
routes:
  - { path: "/api/*", policy: roomy }
)";

constexpr int warm_up = 200;
constexpr int measured = 2000;
constexpr int tenants = 8;

// The ceilings (per request). See the head comment for how to move one.
constexpr double check_instruction_ceiling = 15650;
constexpr double check_allocation_ceiling = 1.5;
constexpr double auth_instruction_ceiling = 22500;
constexpr double auth_allocation_ceiling = 1.5;

struct PerRequest {
    double instructions = 0;
    double allocations = 0;
};

/// Sends warm_up requests, then counts `measured` more; `send(i)` sends the i-th and returns
/// its status.
template <typename Send>
PerRequest per_request(CallgrindServer& server, Send send) {
    for (int i = 0; i < warm_up; ++i) EXPECT_EQ(send(i), 200);
    server.zero();
    int ok = 0;
    for (int i = 0; i < measured; ++i) ok += send(i) == 200 ? 1 : 0;
    const CallgrindCounts counts = server.dump();
    EXPECT_EQ(ok, measured);
    return {static_cast<double>(counts.instructions) / measured, static_cast<double>(counts.allocations) / measured};
}

class InstructionCeilings : public ::testing::Test {
protected:
    void SetUp() override {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(NDEBUG)
        GTEST_SKIP() << "instruction ceilings are Release figures: not under sanitizers or without NDEBUG";
#endif
        if (!CallgrindServer::available()) GTEST_SKIP() << "valgrind (callgrind_control) is not installed";
    }

    void report(const char* what, const PerRequest& r) {
        std::printf("%s: %.0f instructions, %.2f allocations per request\n", what, r.instructions, r.allocations);
        RecordProperty("instructions_per_request", std::to_string(static_cast<long>(r.instructions)));
        RecordProperty("allocations_per_request", std::to_string(r.allocations));
    }
};

TEST_F(InstructionCeilings, AnEmbeddedCheckStaysUnderItsInstructionCeiling) {
    CallgrindServer server(config);
    ASSERT_NE(server.port(), 0);
    HttpClient client(server.port());
    const auto r = per_request(server, [&](int i) {
        const std::string body = R"({"policy":"roomy","tenant":"t)" + std::to_string(i % tenants) + R"("})";
        return client.post("/v1/check", body, {{"Content-Type", "application/json"}}).status;
    });
    report("POST /v1/check, embedded", r);
    EXPECT_LE(r.instructions, check_instruction_ceiling);
    EXPECT_LE(r.allocations, check_allocation_ceiling);
}

TEST_F(InstructionCeilings, AnAuthWithAHashedKeyStaysUnderItsInstructionCeiling) {
    CallgrindServer server(config);
    ASSERT_NE(server.port(), 0);
    HttpClient client(server.port());
    const auto r = per_request(server, [&](int i) {
        const std::map<std::string, std::string> headers{{"X-Original-Method", "GET"},
                                                         {"X-Original-URI", "/api/orders"},
                                                         {"X-Api-Key", "sk_perf_" + std::to_string(i % tenants)}};
        return client.get("/v1/auth", headers).status;
    });
    report("GET /v1/auth, hashed X-Api-Key, embedded", r);
    EXPECT_LE(r.instructions, auth_instruction_ceiling);
    EXPECT_LE(r.allocations, auth_allocation_ceiling);
}

}  // namespace
}  // namespace ratelimitd::test::perf
