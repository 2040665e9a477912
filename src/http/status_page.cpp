// The status page's response: the embedded HTML and the headers that confine it.
#include "ratelimitd/http/status_page.hpp"

#include "ratelimitd/http/admin_endpoints.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/http/handlers.hpp"
#include "ratelimitd/http/json_response.hpp"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <stdexcept>

namespace ratelimitd::http {

namespace {

/// The text between the first `open` tag and its `close` tag of the page.
std::string_view inline_block(std::string_view page, std::string_view open, std::string_view close) {
    const auto start = page.find(open);
    const auto end = start == std::string_view::npos ? start : page.find(close, start + open.size());
    if (end == std::string_view::npos) throw std::logic_error("status_page.html lacks an inline block");
    return page.substr(start + open.size(), end - start - open.size());
}

/// 'sha256-<base64>' of `block`: a CSP source that allows exactly this inline block.
std::string csp_hash(std::string_view block) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(block.data()), block.size(), digest);
    unsigned char encoded[4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1];
    const int length = EVP_EncodeBlock(encoded, digest, SHA256_DIGEST_LENGTH);
    return "'sha256-" + std::string(reinterpret_cast<const char*>(encoded), static_cast<std::size_t>(length)) + "'";
}

}  // namespace

const std::string& status_page_csp() {
    static const std::string csp = [] {
        const std::string_view page = status_page_html();
        return "default-src 'none'; style-src " + csp_hash(inline_block(page, "<style>", "</style>")) +
               "; script-src " + csp_hash(inline_block(page, "<script>", "</script>")) +
               "; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    }();
    return csp;
}

Response answer_status_page(const Request& req, const std::optional<std::string>& admin_token,
                            std::string_view peer) {
    // Without a token, the admin endpoints answer loopback peers only: so does the page.
    if (!admin_token) {
        auto refusal = admin_refusal(req, admin_token, peer);
        if (refusal) return std::move(*refusal);
    }
    auto res = make_response(bhttp::status::ok, "text/html; charset=utf-8", std::string(status_page_html()),
                             req.version(), req.keep_alive());
    res.set("Content-Security-Policy", status_page_csp());
    res.set("X-Content-Type-Options", "nosniff");
    res.set("Referrer-Policy", "no-referrer");
    res.set("X-Frame-Options", "DENY");
    return res;
}

namespace handlers {

boost::asio::awaitable<Answer> status_page(EndpointServices& s, const EndpointCall& call) {
    co_return answer_status_page(call.req, s.options.admin_token, call.ctx.peer);
}

}  // namespace handlers

}  // namespace ratelimitd::http
