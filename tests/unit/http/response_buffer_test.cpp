// render_response against Beast's own serializer: the same bytes for every kind of answer the
// endpoints build, so moving the session off Beast's writer changes nothing on the wire.
#include "ratelimitd/http/response_buffer.hpp"

#include "ratelimitd/check/verdict.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/rate_limit_headers.hpp"

#include <boost/beast/http/write.hpp>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace ratelimitd::http {
namespace {

std::string beast_bytes(const Response& res) {
    std::ostringstream out;
    out << res;
    return out.str();
}

std::string rendered(const Response& res) {
    std::string out;
    render_response(res, out);
    return out;
}

TEST(RenderResponse, AnErrorAnswerIsByteForByteWhatBeastWrites) {
    const auto res = make_error_response(Problem{errc::invalid_request, "tenant: required"}, 11, true);
    EXPECT_EQ(rendered(res), beast_bytes(res));
}

TEST(RenderResponse, ACheckAnswerWithRateLimitHeadersIsByteForByteWhatBeastWrites) {
    check::Verdict v;
    v.allowed = false;
    check::WindowState w;
    w.policy = "api-default";
    w.limit = 60;
    w.window_s = 60;
    w.remaining = 0;
    w.retry_after_s = 7;
    w.reset_epoch_s = 1'800'000'000;
    w.allowed = false;
    v.windows.push_back(w);
    Response res{bhttp::status::too_many_requests, 11};
    res.set(bhttp::field::content_type, "application/json");
    set_rate_limit_headers(v, res);
    res.set("X-Request-Id", "0123456789abcdef");
    res.keep_alive(false);
    res.body() = R"({"allowed":false})";
    res.prepare_payload();
    EXPECT_EQ(rendered(res), beast_bytes(res));
    EXPECT_NE(rendered(res).find("\r\nRetry-After: 7\r\n"), std::string::npos);
}

TEST(RenderResponse, HttpOneZeroACustomReasonAndAnEmptyHeadBodyAreKept) {
    Response res{bhttp::status::ok, 10};
    res.reason("Fine");
    res.set(bhttp::field::content_length, "42");  // a HEAD answer: the length of the GET body
    EXPECT_EQ(rendered(res), "HTTP/1.0 200 Fine\r\nContent-Length: 42\r\n\r\n");
    EXPECT_EQ(rendered(res), beast_bytes(res));
    const Response cont{bhttp::status::continue_, 11};
    EXPECT_EQ(rendered(cont), "HTTP/1.1 100 Continue\r\n\r\n");
}

TEST(RenderResponse, AppendsToWhatTheBufferHoldsAndAChunkedAnswerStaysBeasts) {
    std::string out = "kept:";
    Response res{bhttp::status::no_content, 11};
    render_response(res, out);
    EXPECT_EQ(out, "kept:" + beast_bytes(res));
    Response chunked{bhttp::status::ok, 11};
    chunked.body() = "abc";
    chunked.chunked(true);
    EXPECT_EQ(rendered(chunked), beast_bytes(chunked));
}

TEST(HeaderTooLarge, IsAnErrorCodeAnswered431WithItsName) {
    EXPECT_EQ(to_string(errc::header_too_large), "header_too_large");
    const auto res = make_error_response(
        Problem{errc::header_too_large, "headers: the header block is over 16 KiB"}, 11, false);
    EXPECT_EQ(res.result(), bhttp::status::request_header_fields_too_large);
    EXPECT_EQ(res.body(), R"({"error":"header_too_large","detail":"headers: the header block is over 16 KiB"})");
}

}  // namespace
}  // namespace ratelimitd::http
