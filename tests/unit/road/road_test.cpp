// road::Road, the one road of every door: each call plans on the registry snapshot in force,
// refuses bad input before the store, and keeps what only the road knows (a release's
// algorithm, a refund's names, an auth subrequest's deny status); a check the store declines
// at once is asked once more, not twice (the denial cache is looked up once per check).
#include "ratelimitd/road/road.hpp"

#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/store/denial_cache.hpp"
#include "support/run_on_io.hpp"
#include "support/scripted_store.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace ratelimitd::road {
namespace {

constexpr const char* config =
    "auth: { deny_status: 403 }\n"
    "policies:\n"
    "  login: { algorithm: fixed_window, limit: 5, window: 1m }\n"
    "  workers: { algorithm: concurrency, limit: 2, lease: 30s }\n";

class RoadTest : public ::testing::Test {
protected:
    RoadTest()
        : registry_(std::make_shared<const policy::Registry>(policy::parse_config(config, "road_test.yaml").registry)),
          service_(registry_, store_, metrics_),
          road_(service_) {}

    static check::CheckRequest request(std::string policy) {
        check::CheckRequest req;
        req.policy = std::move(policy);
        req.tenant = "t1";
        return req;
    }

    /// A call as a coroutine door takes the road: the caller's frame (here, this one) owns it.
    Call decide(Call call) {
        test::run_on_io(road_.decide(call));
        return call;
    }

    /// /v1/report as the HTTP door takes it, then the refund's log line.
    result<service::Decision> report(const policy::ReportRequest& req, std::string_view peer,
                                     std::string_view request_id) {
        Call call(Ask::report);
        call.report = &req;
        call = decide(std::move(call));
        if (call.problem) return std::move(*call.problem);
        if (req.cost < 0) Road::log_refund(call, static_cast<std::uint64_t>(-req.cost), peer, request_id);
        return call.decision;
    }

    /// /v1/auth as the HTTP door takes it: the decision and the status a denial answers with.
    result<std::pair<service::Decision, int>> auth(const policy::AuthRequest& req, std::optional<int> deny_status) {
        Call call(Ask::auth);
        call.auth = &req;
        call.deny_status_asked = deny_status;
        call.now = std::chrono::steady_clock::now();
        call = decide(std::move(call));
        if (call.problem) return std::move(*call.problem);
        return std::pair{call.decision, call.deny_status};
    }

    /// /v1/check as the HTTP door takes it, through the entry that answers at once when it can.
    result<service::Decision> check(const check::CheckRequest& req) {
        Call call(Ask::check);
        call.check = &req;
        call.now = std::chrono::steady_clock::now();
        return test::run_on_io(road_.decide(std::move(call), [](Call& c) -> result<service::Decision> {
            if (c.problem) return std::move(*c.problem);
            return c.decision;
        }));
    }

    policy::RegistryHandle registry_;
    test::ScriptedStore store_;
    service::Metrics metrics_;
    service::CheckService service_;
    Road road_;
};

TEST_F(RoadTest, ACheckIsPlannedThenDecided) {
    const auto d = check(request("login"));
    ASSERT_TRUE(d.has_value()) << d.error().detail;
    EXPECT_TRUE(d->verdict.allowed);
    EXPECT_EQ(d->policy, "login");
    ASSERT_EQ(store_.calls().size(), 1u);
    EXPECT_EQ(store_.calls()[0].policies, std::vector<std::string>{"login"});
}

TEST_F(RoadTest, APlanningProblemComesBackAndTheStoreIsNotAsked) {
    const auto d = check(request("nope"));
    ASSERT_FALSE(d.has_value());
    EXPECT_EQ(d.error().code, errc::unknown_policy);
    EXPECT_TRUE(store_.calls().empty());
}

TEST_F(RoadTest, AReleaseOfAPolicyThatKeepsNoLeasesIsRefusedBeforeTheStore) {
    const check::CheckRequest login = request("login");
    const std::string lease(32, 'a');
    Call call(Ask::release);
    call.check = &login;
    call.lease = lease;
    const auto d = decide(std::move(call)).problem;
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->code, errc::invalid_request);
    EXPECT_EQ(d->detail,
              "policy: \"login\" uses fixed_window; only leases of algorithm concurrency can be released");
    EXPECT_TRUE(store_.calls().empty());
}

TEST_F(RoadTest, ARefundTheStoreTookIsCountedPerLimit) {
    policy::ReportRequest refund{request("login"), -3};
    const auto d = report(refund, "127.0.0.1", "req-1");
    ASSERT_TRUE(d.has_value()) << d.error().detail;
    EXPECT_TRUE(d->report);
    const std::string text = metrics_.render("0", "scripted");
    EXPECT_NE(text.find("ratelimitd_refunded_units_total{policy=\"login\"} 3\n"), std::string::npos) << text;

    policy::ReportRequest charge{request("login"), 2};
    ASSERT_TRUE(report(charge, "127.0.0.1", "req-2").has_value());
    EXPECT_NE(metrics_.render("0", "scripted").find("ratelimitd_refunds_total{policy=\"login\"} 1\n"),
              std::string::npos)
        << "a positive report is no refund";
}

TEST_F(RoadTest, AnAuthSubrequestDeniesWithTheProxysStatusElseTheRegistrys) {
    policy::IdentityInput identity;
    identity.headers = [](std::string_view) { return policy::HeaderList{}; };
    identity.peer = "192.0.2.1";
    const policy::AuthRequest subrequest{"GET", "/x", identity, {}};
    const auto a = auth(subrequest, std::nullopt);  // the registry's
    ASSERT_TRUE(a.has_value()) << a.error().detail;
    EXPECT_EQ(a->second, 403);
    const auto b = auth(subrequest, 429);  // the proxy's
    ASSERT_TRUE(b.has_value()) << b.error().detail;
    EXPECT_EQ(b->second, 429);
}

/// The store seams a check crosses, counted: what a CachingStore's try_apply_now and
/// apply_declined stand for (each looks the denial cache up, or not).
class CountingStore final : public store::Store {
public:
    int at_once = 0;   ///< try_apply_now: a lookup
    int applied = 0;   ///< apply: a lookup, then the store
    int declined = 0;  ///< apply_declined: the store only

    boost::asio::awaitable<result<check::Verdict>> apply(const policy::Policy& p, std::string key,
                                                         std::uint32_t cost) override {
        ++applied;
        return inner_.apply(p, std::move(key), cost);
    }
    std::optional<result<check::Verdict>> try_apply_now(const policy::Policy&, const std::string&, std::uint32_t,
                                                        std::chrono::steady_clock::time_point) override {
        ++at_once;
        return std::nullopt;
    }
    boost::asio::awaitable<result<check::Verdict>> apply_declined(const policy::Policy& p, std::string key,
                                                                  std::uint32_t cost) override {
        ++declined;
        return inner_.apply(p, std::move(key), cost);
    }
    boost::asio::awaitable<result<check::Verdict>> apply_all(std::vector<store::LimitCheck> checks) override {
        return inner_.apply_all(std::move(checks));
    }
    boost::asio::awaitable<result<check::Verdict>> peek(const policy::Policy& p, std::string key) override {
        return inner_.peek(p, std::move(key));
    }
    boost::asio::awaitable<result<bool>> reset(std::string key) override { return inner_.reset(std::move(key)); }
    boost::asio::awaitable<bool> ready() override { return inner_.ready(); }
    std::string describe() const override { return "counting"; }

private:
    test::ScriptedStore inner_;
};

// A check the store cannot answer at once is asked at once (one lookup of a caching store's
// denial cache) and then once more without the lookup: the seam is crossed once for it, by
// the HTTP entry (decide with a finish) and the coroutine entry alike.
TEST_F(RoadTest, ACheckTheStoreDeclinesAtOnceLooksTheDenialCacheUpOnce) {
    CountingStore counting;
    service::CheckService service(registry_, counting, metrics_);
    const Road road(service);
    const check::CheckRequest login = request("login");
    Call waited(Ask::check);
    waited.check = &login;
    const bool allowed =
        test::run_on_io(road.decide(std::move(waited), [](Call& c) { return c.decision.verdict.allowed; }));
    EXPECT_TRUE(allowed);
    EXPECT_EQ(counting.at_once, 1);
    EXPECT_EQ(counting.declined, 1);
    EXPECT_EQ(counting.applied, 0);

    Call owned(Ask::check);
    owned.check = &login;
    test::run_on_io(road.decide(owned));
    EXPECT_FALSE(owned.problem.has_value());
    EXPECT_EQ(counting.at_once, 2);
    EXPECT_EQ(counting.declined, 2);
    EXPECT_EQ(counting.applied, 0);
}

// A caching store asked through the road: the denial the store answered is remembered by
// apply_declined, and the next check is answered at once from the cache (one hit).
TEST_F(RoadTest, ADenialRememberedOnTheWayIsAnsweredAtOnceNextTime) {
    store::DenialCache cache;
    store::CachingStore caching(store_, cache);
    service::CheckService service(registry_, caching, metrics_);
    const Road road(service);
    const check::CheckRequest login = request("login");
    const auto check_once = [&] {
        Call call(Ask::check);
        call.check = &login;
        test::run_on_io(road.decide(call));
        return call.decision;
    };
    store_.push(test::Scripted::deny);
    EXPECT_FALSE(check_once().verdict.allowed);
    EXPECT_EQ(store_.calls().size(), 1u);
    const auto again = check_once();
    EXPECT_FALSE(again.verdict.allowed);
    EXPECT_TRUE(again.verdict.from_denial_cache);
    EXPECT_EQ(cache.hits(), 1u);
    EXPECT_EQ(store_.calls().size(), 1u) << "the cached denial never reached the store";
}

// The admin asks take the road too: peek and reset plan the key a check would use; a
// policy-less route is refused before the store.
TEST_F(RoadTest, PeekAndResetPlanTheKeyACheckWouldUse) {
    const check::CheckRequest login = request("login");
    Call peek(Ask::peek);
    peek.check = &login;
    test::run_on_io(road_.decide(peek));
    ASSERT_FALSE(peek.problem.has_value()) << peek.problem->detail;
    EXPECT_EQ(peek.decision.policy, "login");
    store_.push(test::Scripted::admit);  // there was state to forget
    Call reset(Ask::reset);
    reset.check = &login;
    test::run_on_io(road_.decide(reset));
    ASSERT_FALSE(reset.problem.has_value()) << reset.problem->detail;
    EXPECT_TRUE(reset.forgot);
    ASSERT_EQ(store_.calls().size(), 2u);
    EXPECT_EQ(store_.calls()[0].kind, "peek");
    EXPECT_EQ(store_.calls()[1].kind, "reset");
    EXPECT_EQ(store_.calls()[0].keys, store_.calls()[1].keys);

    const check::CheckRequest nope = request("nope");
    Call refused(Ask::reset);
    refused.check = &nope;
    test::run_on_io(road_.decide(refused));
    ASSERT_TRUE(refused.problem.has_value());
    EXPECT_EQ(refused.problem->code, errc::unknown_policy);
    EXPECT_EQ(store_.calls().size(), 2u);
}

}  // namespace
}  // namespace ratelimitd::road
