// The common check answer's body written in one pass: the same bytes as the JSON document the
// contract describes (nlohmann's ordered dump, which the JsonWriter path matches), for every
// one-window shape it takes; every other shape is left to the JsonWriter path.
#include "ratelimitd/http/check_answer_body.hpp"

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/headers/rate_limit_fields.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace ratelimitd::http {
namespace {

using ordered_json = nlohmann::ordered_json;

service::Decision one_window(bool allowed) {
    service::Decision d;
    d.policy = "login";
    d.tenant = "t1";
    d.scope = "global";
    check::WindowState w;
    w.policy = "login";
    w.allowed = allowed;
    w.limit = 5;
    w.window_s = 60;
    w.remaining = allowed ? 4 : 0;
    w.reset_epoch_s = 1764518461;
    w.retry_after_s = allowed ? 0 : 42;
    d.verdict.allowed = allowed;
    d.verdict.windows = {w};
    return d;
}

// The contract's document for a one-window decision, field by field.
std::string expected(const service::Decision& d) {
    const check::WindowState& w = d.verdict.windows.front();
    ordered_json j = ordered_json::object();
    j["allowed"] = d.verdict.allowed;
    j["policy"] = d.policy;
    j["tenant"] = std::string(d.tenant.view());
    j["scope"] = d.scope;
    j["limit"] = headers::shown_count(w.limit);
    j["remaining"] = headers::shown_count(w.remaining);
    j["reset"] = headers::shown_count(w.reset_epoch_s);
    j["retry_after"] = d.verdict.allowed ? 0 : headers::retry_after_of(w);
    if (d.verdict.delay_ms() > 0) j["delay_ms"] = d.verdict.delay_ms();
    if (d.shadow_denied) j["shadow_denied"] = true;
    if (d.fail_closed) j["on_store_error"] = "deny";
    return j.dump();
}

std::string written(const service::Decision& d) {
    PooledString out;
    EXPECT_TRUE(write_one_window_check_body(d, headers::ShownCounts(d.verdict), out));
    return std::string(out);
}

TEST(OneWindowCheckBody, AnAllowAndADenyAreTheContractsDocument) {
    EXPECT_EQ(written(one_window(true)), expected(one_window(true)));
    EXPECT_EQ(written(one_window(false)), expected(one_window(false)));
}

TEST(OneWindowCheckBody, DelayShadowAndFailClosedAreAddedInTheirOrder) {
    service::Decision d = one_window(true);
    d.verdict.windows.front().delay_ms = 250;
    d.shadow_denied = true;
    d.fail_closed = true;
    EXPECT_EQ(written(d), expected(d));
    service::Decision denied = one_window(false);
    denied.verdict.windows.front().delay_ms = 250;  // a denial shows no delay
    denied.fail_closed = true;
    EXPECT_EQ(written(denied), expected(denied));
}

TEST(OneWindowCheckBody, NumbersAreClampedAsTheHeadersShowThem) {
    service::Decision d = one_window(false);
    d.verdict.windows.front().remaining = -3;
    d.verdict.windows.front().limit = headers::max_shown_count + 10;
    d.verdict.windows.front().retry_after_s = 0;
    EXPECT_EQ(written(d), expected(d));
}

TEST(OneWindowCheckBody, TextToEscapeOrCheckAsUtf8IsLeftToTheWriter) {
    for (const std::string& tenant : {std::string("a\"b"), std::string("a\\b"), std::string("a\x01z"),
                                      std::string("caf\xc3\xa9")}) {
        service::Decision d = one_window(true);
        d.tenant = tenant;
        PooledString out("untouched");
        EXPECT_FALSE(write_one_window_check_body(d, headers::ShownCounts(d.verdict), out)) << tenant;
        EXPECT_EQ(out, "untouched");
        // The answer is still the contract's document, from the JsonWriter path.
        const Response res = make_check_response(d, 11, true);
        EXPECT_EQ(std::string(res.body()), expected(d)) << tenant;
    }
}

TEST(OneWindowCheckBody, SeveralWindowsOrALeaseAreLeftToTheWriter) {
    service::Decision two = one_window(true);
    two.verdict.windows.push_back(two.verdict.windows.front());
    PooledString out;
    EXPECT_FALSE(write_one_window_check_body(two, headers::ShownCounts(two.verdict), out));
    service::Decision leased = one_window(true);
    leased.verdict.windows.front().lease = "lease-1";
    EXPECT_FALSE(write_one_window_check_body(leased, headers::ShownCounts(leased.verdict), out));
    EXPECT_TRUE(out.empty());
}

TEST(OneWindowCheckBody, TheCheckAnswerCarriesIt) {
    const service::Decision d = one_window(false);
    const Response res = make_check_response(d, 11, true);
    EXPECT_EQ(std::string(res.body()), expected(d));
    EXPECT_EQ(res.result_int(), 429u);
    EXPECT_EQ(res["Content-Type"], "application/json");
    EXPECT_EQ(res["Cache-Control"], "no-store");
}

}  // namespace
}  // namespace ratelimitd::http
