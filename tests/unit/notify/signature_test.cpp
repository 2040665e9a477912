// RateLimit-Signature and the event body: a known HMAC-SHA256 vector, the header's shape, the
// body's fields in the documented order, and the bounded queue.
#include "ratelimitd/notify/delivery_queue.hpp"
#include "ratelimitd/notify/event_body.hpp"
#include "ratelimitd/notify/signature.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

namespace ratelimitd::notify {
namespace {

TEST(Signature, HmacSha256MatchesTheRfc4231Vector) {
    // RFC 4231, test case 2.
    EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Signature, SignsTheTimeAndTheBodyTogether) {
    const std::string body = R"({"id":"evt_1"})";
    const std::string v = signature_value("0123456789abcdef", 1700000000, body);
    EXPECT_EQ(v, "t=1700000000,v1=" + hmac_sha256_hex("0123456789abcdef", "1700000000." + body));
    EXPECT_NE(v, signature_value("0123456789abcdef", 1700000001, body)) << "another time, another signature";
    EXPECT_EQ(v.find("0123456789abcdef"), std::string::npos) << "the secret is never in the header";
}

TEST(EventBody, HasTheContractsFieldsInOrderAndNoSecret) {
    auto target = std::make_shared<policy::NotifyTarget>();
    target->name = "ops";
    target->secret = "a-secret-of-enough-bytes";
    auto rule = std::make_shared<policy::NotifyRule>(policy::NotifyRule{"api", {0.8, 1.0}, target});
    service::Crossing c{rule, 0.8, "acme", "global", 100, 80, 1700000000001};
    c.plan = "pro";
    c.window_name = "api-1m";
    c.window_s = 60;
    c.crossed_at_ms = 1699999990500;
    const std::string body = event_body(c, "evt_x");
    EXPECT_EQ(body, R"({"id":"evt_x","type":"threshold","policy":"api","plan":"pro","tenant":"acme","scope":"global",)"
                    R"("window":{"name":"api-1m","seconds":60},"window_start":1699999940,"window_end":1700000001,)"
                    R"("crossed_at":1699999990,"threshold":0.8,"limit":100,"used":80})");
    EXPECT_EQ(body.find(target->secret), std::string::npos);
}

TEST(EventBody, ADebtEventHasTheBoundAndTheDebtInsteadOfTheThreshold) {
    auto target = std::make_shared<policy::NotifyTarget>();
    target->name = "ops";
    target->secret = "a-secret-of-enough-bytes";
    auto rule = std::make_shared<policy::NotifyRule>(policy::NotifyRule{"api", {}, target});
    rule->debt = 500;
    service::Crossing c{rule, 0, "acme", "global", 100, 0, 1700000000001};
    c.debt = 512;
    c.window_name = "api";
    c.window_s = 3600;
    c.crossed_at_ms = 1699999999999;
    const std::string body = event_body(c, "evt_d");
    EXPECT_EQ(body, R"({"id":"evt_d","type":"debt","policy":"api","plan":null,"tenant":"acme","scope":"global",)"
                    R"("window":{"name":"api","seconds":3600},"window_start":1699996400,"window_end":1700000001,)"
                    R"("crossed_at":1699999999,"bound":500,"debt":512,"limit":100})");
    EXPECT_EQ(body.find(target->secret), std::string::npos);
}

TEST(EventBody, AnEventsIdIsStablePerTenantPolicyWindowAndThreshold) {
    auto rule = std::make_shared<policy::NotifyRule>(policy::NotifyRule{"api", {0.8, 1.0}, nullptr});
    service::Crossing c{rule, 0.8, "acme", "global", 100, 80, 1700000000001};
    c.window_name = "api";
    const std::string id = event_id(c);
    EXPECT_EQ(id.size(), 4u + 32u);
    EXPECT_EQ(id.rfind("evt_", 0), 0u);
    service::Crossing again = c;
    again.used = 85;  // another sidecar's view of the same crossing: the same event
    again.crossed_at_ms = 1699999999000;
    EXPECT_EQ(event_id(again), id);
    std::set<std::string> ids{id};
    service::Crossing other = c;
    other.threshold = 1.0;
    EXPECT_TRUE(ids.insert(event_id(other)).second) << "the 100 % event of the window";
    other = c;
    other.window_end_ms += 60'000;
    EXPECT_TRUE(ids.insert(event_id(other)).second) << "the next window";
    other = c;
    other.tenant = "globex";
    EXPECT_TRUE(ids.insert(event_id(other)).second);
    other = c;
    other.window_name = "api-1d";
    EXPECT_TRUE(ids.insert(event_id(other)).second) << "another window of a multi-window policy";
    other = c;
    other.debt = 10;
    EXPECT_TRUE(ids.insert(event_id(other)).second) << "a debt event";
}

TEST(EventBody, IdsAreUniqueAndLookTheSame) {
    std::set<std::string> ids;
    for (int i = 0; i < 1000; ++i) ids.insert(new_event_id());
    EXPECT_EQ(ids.size(), 1000u);
    EXPECT_EQ(ids.begin()->size(), 4u + 32u);
    EXPECT_EQ(ids.begin()->rfind("evt_", 0), 0u);
}

TEST(DeliveryQueue, HoldsItsCapacityAndTakesTheOldestEventWhoseTargetHasRoom) {
    auto a = std::make_shared<policy::NotifyTarget>();
    a->name = "a";
    auto b = std::make_shared<policy::NotifyTarget>();
    b->name = "b";
    DeliveryQueue q(3);
    EXPECT_TRUE(q.push({a, "1", "", {}}));
    EXPECT_TRUE(q.push({b, "2", "", {}}));
    EXPECT_TRUE(q.push({a, "3", "", {}}));
    EXPECT_FALSE(q.push({b, "4", "", {}})) << "full: dropped";
    EXPECT_EQ(q.size(), 3u);
    EXPECT_TRUE(q.full());
    auto first = q.take([](const std::string& t) { return t == "b"; });
    ASSERT_TRUE(first);
    EXPECT_EQ(first->id, "2") << "a busy target's events wait; others pass them";
    EXPECT_FALSE(q.take([](const std::string&) { return false; }));
    EXPECT_EQ(q.take([](const std::string&) { return true; })->id, "1");
    EXPECT_EQ(q.take([](const std::string&) { return true; })->id, "3");
    EXPECT_EQ(q.size(), 0u);
    EXPECT_FALSE(q.full());
}

TEST(DeliveryQueue, AsksEachTargetOnceWhateverTheEventsWaiting) {
    auto a = std::make_shared<policy::NotifyTarget>();
    a->name = "a";
    auto b = std::make_shared<policy::NotifyTarget>();
    b->name = "b";
    DeliveryQueue q(10'000);
    for (int i = 0; i < 9'999; ++i) ASSERT_TRUE(q.push({a, std::to_string(i), "", {}}));
    ASSERT_TRUE(q.push({b, "last", "", {}}));
    int asked = 0;
    const auto only_b = [&asked](const std::string& t) {
        ++asked;
        return t == "b";
    };
    EXPECT_EQ(q.take(only_b)->id, "last") << "behind 9999 events of a busy target";
    EXPECT_EQ(asked, 2) << "one question per target, not per event";
    asked = 0;
    EXPECT_FALSE(q.take(only_b));
    EXPECT_LE(asked, 1);
}

}  // namespace
}  // namespace ratelimitd::notify
