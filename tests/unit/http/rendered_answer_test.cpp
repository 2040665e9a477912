// RenderedAnswer and Answer: a check answer written straight as bytes frames itself as Beast
// would (Content-Length, Connection for 1.1 and 1.0), carries each field once, and reads back
// as the same message.
#include "ratelimitd/http/answer.hpp"

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ratelimitd::http {
namespace {

std::string wire(const Answer& a) {
    std::string out;
    a.render(out);
    return out;
}

std::size_t count(std::string_view text, std::string_view needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

service::Decision denied_decision() {
    service::Decision d;
    d.limited = true;
    d.policy = "login";
    d.tenant = "t1";
    d.scope = "global";
    check::WindowState w;
    w.policy = "login";
    w.allowed = false;
    w.limit = 5;
    w.window_s = 60;
    w.remaining = 0;
    w.reset_epoch_s = 1764518461;
    w.retry_after_s = 42;
    d.verdict.allowed = false;
    d.verdict.windows = {w};
    return d;
}

TEST(RenderedAnswer, FramesItsBodyWithContentLengthAndEndsTheHeadWithAnEmptyLine) {
    RenderedAnswer r(bhttp::status::ok, 11, true);
    r.add_field("Content-Type", "application/json");
    PooledString body("{\"a\":1}");
    r.body(std::move(body));
    std::string out;
    r.render(out);
    EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}");
}

TEST(RenderedAnswer, SaysConnectionOnlyWhereHttpNeedsIt) {
    const auto rendered = [](unsigned version, bool keep_alive) {
        std::string out;
        RenderedAnswer(bhttp::status::too_many_requests, version, keep_alive).render(out);
        return out;
    };
    EXPECT_EQ(count(rendered(11, true), "Connection:"), 0u);
    EXPECT_NE(rendered(11, false).find("\r\nConnection: close\r\n"), std::string::npos);
    EXPECT_NE(rendered(10, true).find("\r\nConnection: keep-alive\r\n"), std::string::npos);
    EXPECT_EQ(count(rendered(10, false), "Connection:"), 0u);
    EXPECT_EQ(rendered(10, false).substr(0, 30), "HTTP/1.0 429 Too Many Requests");
}

TEST(Answer, ADenialCarriesCacheControlOnceAndReadsBackAsTheSameMessage) {
    Answer a = make_check_answer(denied_decision(), 11, true);
    a.add_field("X-Request-Id", "abc");
    const std::string bytes = wire(a);
    EXPECT_EQ(count(bytes, "Cache-Control:"), 1u);
    EXPECT_EQ(a.status(), 429u);

    const Response res = a.to_response();
    EXPECT_EQ(res.result_int(), 429u);
    EXPECT_EQ(res["Retry-After"], "42");
    EXPECT_EQ(res["X-RateLimit-Remaining"], "0");
    EXPECT_EQ(res["X-Request-Id"], "abc");
    EXPECT_EQ(res["Content-Length"], std::to_string(res.body().size()));
    EXPECT_TRUE(res.keep_alive());
}

TEST(Answer, KeepAliveTurnedOffOnARenderedAnswerClosesTheConnection) {
    Answer a = make_check_answer(denied_decision(), 11, true);
    a.keep_alive(false);
    EXPECT_FALSE(a.keep_alive());
    EXPECT_NE(wire(a).find("\r\nConnection: close\r\n"), std::string::npos);
    EXPECT_FALSE(a.to_response().keep_alive());
}

TEST(Answer, ABeastResponseRendersAsBefore) {
    Answer a = make_error_response(Problem{errc::invalid_request, "tenant: required"}, 11, true);
    a.add_field("X-Request-Id", "abc");
    EXPECT_EQ(a.status(), 400u);
    EXPECT_NE(wire(a).find("\r\nX-Request-Id: abc\r\n"), std::string::npos);
}

}  // namespace
}  // namespace ratelimitd::http
