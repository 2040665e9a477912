// GET /: the embedded page, its confining headers, and who may load it.
#include "ratelimitd/http/status_page.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

namespace ratelimitd::http {
namespace {

Response get_page(const std::optional<std::string>& token, std::string_view peer, std::string_view authorization = {}) {
    Request req{bhttp::verb::get, "/", 11};
    if (!authorization.empty()) req.set(bhttp::field::authorization, authorization);
    return answer_status_page(req, token, peer);
}

TEST(StatusPage, LoopbackWithoutTokenGetsTheEmbeddedPage) {
    const auto res = get_page(std::nullopt, "127.0.0.1");
    EXPECT_EQ(res.result_int(), 200u);
    EXPECT_EQ(res[bhttp::field::content_type], "text/html; charset=utf-8");
    EXPECT_EQ(res.body(), status_page_html());
    EXPECT_NE(res.body().find("<title>ratelimitd status</title>"), std::string::npos);
    EXPECT_EQ(res["X-Content-Type-Options"], "nosniff");
    EXPECT_EQ(res[bhttp::field::cache_control], "no-store");
}

TEST(StatusPage, NonLoopbackWithoutTokenIsRefusedLikeTheAdminEndpoints) {
    const auto res = get_page(std::nullopt, "192.0.2.10");
    EXPECT_EQ(res.result_int(), 403u);
    EXPECT_NE(res.body().find("admin_disabled"), std::string::npos);
}

TEST(StatusPage, WithATokenThePageIsServedAndItsFetchesCarryTheToken) {
    // The page holds no data; a browser cannot send a bearer token when it navigates, so
    // the page asks for the token and the admin endpoints check it on every fetch.
    EXPECT_EQ(get_page(std::string("s3cret-token-0123456789"), "192.0.2.10").result_int(), 200u);
    EXPECT_EQ(get_page(std::string("s3cret-token-0123456789"), "192.0.2.10", "Bearer wrong").result_int(), 200u);
    const std::string page(status_page_html());
    EXPECT_NE(page.find("Authorization: \"Bearer \" + token"), std::string::npos);
    EXPECT_EQ(page.find("token="), std::string::npos) << "the token must never go into a URL";
    EXPECT_EQ(page.find("localStorage"), std::string::npos) << "kept in the tab only (sessionStorage)";
}

TEST(StatusPage, NoExternalAssets) {
    const std::string page(status_page_html());
    for (const char* external : {"src=", "href=", "http://", "https://", "@import", "url("}) {
        EXPECT_EQ(page.find(external), std::string::npos) << external;
    }
}

std::string sha256_base64(std::string_view text) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    unsigned char out[64];
    const int n = EVP_EncodeBlock(out, digest, SHA256_DIGEST_LENGTH);
    return std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
}

TEST(StatusPage, PolicyAllowsExactlyTheInlineScriptAndStyle) {
    const std::string page(status_page_html());
    const auto script_at = page.find("<script>") + 8;
    const std::string script = page.substr(script_at, page.find("</script>") - script_at);
    const auto style_at = page.find("<style>") + 7;
    const std::string style = page.substr(style_at, page.find("</style>") - style_at);
    const std::string csp = get_page(std::nullopt, "::1")["Content-Security-Policy"];
    EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << csp;
    EXPECT_NE(csp.find("script-src 'sha256-" + sha256_base64(script) + "'"), std::string::npos) << csp;
    EXPECT_NE(csp.find("style-src 'sha256-" + sha256_base64(style) + "'"), std::string::npos) << csp;
    EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos) << csp;
    EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
    // One script and one style block: a second one would run unhashed, i.e. not at all.
    EXPECT_EQ(page.find("<script", script_at), std::string::npos);
    EXPECT_EQ(page.find("<style", style_at), std::string::npos);
}

}  // namespace
}  // namespace ratelimitd::http
