// Fuzz target: raw bytes -> HTTP request parser (16 KiB limits) -> /v1/check query or JSON
// body parsing. Any crash, sanitizer report or escaped exception is a finding, and so is a
// body that the allocation-free flat reader and the general JSON parser read differently.
#include "ratelimitd/http/check_codec.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace bhttp = boost::beast::http;

namespace {

using Parsed = ratelimitd::result<ratelimitd::check::CheckRequest>;

bool same(const Parsed& a, const Parsed& b) {
    if (a.has_value() != b.has_value()) return false;
    if (!a) return a.error().code == b.error().code && a.error().detail == b.error().detail;
    const auto& x = *a;
    const auto& y = *b;
    return x.policy == y.policy && x.tenant == y.tenant && x.scope == y.scope && x.cost == y.cost &&
           x.method == y.method && x.path == y.path && x.plan == y.plan;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);

    // The same bytes as a body and as a query string, straight into the codec.
    // parse_check_json takes the flat reader's way when it can; the answer must not depend on it.
    if (!same(ratelimitd::http::parse_check_json(bytes), ratelimitd::http::parse_check_json_general(bytes))) {
        std::abort();
    }
    (void)ratelimitd::http::parse_check_query(bytes);

    // And as a whole request through Beast's parser with the server's limits.
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(16 * 1024);
    parser.body_limit(16 * 1024);
    parser.eager(true);
    boost::beast::error_code ec;
    parser.put(boost::asio::buffer(data, size), ec);
    if (!ec && parser.is_done()) {
        const auto& req = parser.get();
        const std::string_view target = req.target();
        const auto q = target.find('?');
        if (q != std::string_view::npos) (void)ratelimitd::http::parse_check_query(target.substr(q + 1));
        (void)ratelimitd::http::parse_check_json(req.body());
    }
    return 0;
}
