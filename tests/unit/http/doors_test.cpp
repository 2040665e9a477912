// door::Doors, the one road of check, auth, report and release (gRPC's is in
// tests/unit/grpc and tests/grpc): each plans on the registry snapshot in force, refuses bad
// input before the store, and keeps what only a door knows (a release's algorithm, a
// refund's count, an auth subrequest's deny status). Lives with the http tests: unit_http
// links the door module through rl_http.
#include "ratelimitd/door/doors.hpp"

#include "ratelimitd/policy/registry_loader.hpp"
#include "support/run_on_io.hpp"
#include "support/scripted_store.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace ratelimitd::door {
namespace {

constexpr const char* config =
    "auth: { deny_status: 403 }\n"
    "policies:\n"
    "  login: { algorithm: fixed_window, limit: 5, window: 1m }\n"
    "  workers: { algorithm: concurrency, limit: 2, lease: 30s }\n";

class DoorsTest : public ::testing::Test {
protected:
    DoorsTest()
        : registry_(std::make_shared<const policy::Registry>(policy::parse_config(config, "doors_test.yaml").registry)),
          service_(registry_, store_, metrics_),
          doors_(service_) {}

    static check::CheckRequest request(std::string policy) {
        check::CheckRequest req;
        req.policy = std::move(policy);
        req.tenant = "t1";
        return req;
    }

    /// /v1/report as the HTTP door takes it: report_plan, decide_into, log_refund.
    result<service::Decision> report(const policy::ReportRequest& req, const Caller& caller) {
        policy::CheckPlan plan;
        RefundedLimits refunded;
        if (auto bad = doors_.report_plan(req, plan, refunded)) return std::move(*bad);
        service::Decision d;
        test::run_on_io(doors_.decide_into(plan, d));
        if (req.cost < 0) Doors::log_refund(d, static_cast<std::uint64_t>(-req.cost), refunded, caller);
        return d;
    }

    /// /v1/auth as the HTTP door takes it: auth_now, and decide_into when that left a plan.
    result<AuthOutcome> auth(const AuthRequest& req) {
        policy::CheckPlan plan;
        int deny_status = 0;
        if (auto now = doors_.auth_now(req, plan, deny_status, std::chrono::steady_clock::now())) {
            return std::move(*now);
        }
        service::Decision d;
        test::run_on_io(doors_.decide_into(plan, d));
        return AuthOutcome{std::move(d), deny_status};
    }

    /// /v1/check as the HTTP door takes it: check_now, and decide_into when that left a plan.
    result<service::Decision> check(const check::CheckRequest& req) {
        policy::CheckPlan plan;
        if (auto now = doors_.check_now(req, plan, std::chrono::steady_clock::now())) return std::move(*now);
        service::Decision d;
        test::run_on_io(doors_.decide_into(plan, d));
        return d;
    }

    policy::RegistryHandle registry_;
    test::ScriptedStore store_;
    service::Metrics metrics_;
    service::CheckService service_;
    Doors doors_;
};

TEST_F(DoorsTest, ACheckIsPlannedThenDecided) {
    const auto d = check(request("login"));
    ASSERT_TRUE(d.has_value()) << d.error().detail;
    EXPECT_TRUE(d->verdict.allowed);
    EXPECT_EQ(d->policy, "login");
    ASSERT_EQ(store_.calls().size(), 1u);
    EXPECT_EQ(store_.calls()[0].policies, std::vector<std::string>{"login"});
}

TEST_F(DoorsTest, APlanningProblemComesBackAndTheStoreIsNotAsked) {
    const auto d = check(request("nope"));
    ASSERT_FALSE(d.has_value());
    EXPECT_EQ(d.error().code, errc::unknown_policy);
    EXPECT_TRUE(store_.calls().empty());
}

TEST_F(DoorsTest, AReleaseOfAPolicyThatKeepsNoLeasesIsRefusedBeforeTheStore) {
    const auto d = test::run_on_io(doors_.release(ReleaseRequest{request("login"), std::string(32, 'a')}));
    ASSERT_FALSE(d.has_value());
    EXPECT_EQ(d.error().code, errc::invalid_request);
    EXPECT_EQ(d.error().detail,
              "policy: \"login\" uses fixed_window; only leases of algorithm concurrency can be released");
    EXPECT_TRUE(store_.calls().empty());
}

TEST_F(DoorsTest, ARefundTheStoreTookIsCountedPerLimit) {
    policy::ReportRequest refund{request("login"), -3};
    const auto d = report(refund, Caller{"127.0.0.1", "req-1"});
    ASSERT_TRUE(d.has_value()) << d.error().detail;
    EXPECT_TRUE(d->report);
    const std::string text = metrics_.render("0", "scripted");
    EXPECT_NE(text.find("ratelimitd_refunded_units_total{policy=\"login\"} 3\n"), std::string::npos) << text;

    policy::ReportRequest charge{request("login"), 2};
    ASSERT_TRUE(report(charge, Caller{"127.0.0.1", "req-2"}).has_value());
    EXPECT_NE(metrics_.render("0", "scripted").find("ratelimitd_refunds_total{policy=\"login\"} 1\n"),
              std::string::npos)
        << "a positive report is no refund";
}

TEST_F(DoorsTest, AnAuthSubrequestDeniesWithTheProxysStatusElseTheRegistrys) {
    policy::IdentityInput identity;
    identity.headers = [](std::string_view) { return std::vector<std::string_view>{}; };
    identity.peer = "192.0.2.1";
    const std::optional<std::string> no_env_secret;
    const AuthRequest registrys{"GET", "/x", identity, std::nullopt, no_env_secret};
    const auto a = auth(registrys);
    ASSERT_TRUE(a.has_value()) << a.error().detail;
    EXPECT_EQ(a->deny_status, 403);
    const AuthRequest proxys{"GET", "/x", identity, 429, no_env_secret};
    const auto b = auth(proxys);
    ASSERT_TRUE(b.has_value()) << b.error().detail;
    EXPECT_EQ(b->deny_status, 429);
}

}  // namespace
}  // namespace ratelimitd::door
