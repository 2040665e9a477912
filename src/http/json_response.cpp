// make_response / json_response: the fields every answer carries, set in one place.
#include "ratelimitd/http/json_response.hpp"

namespace ratelimitd::http {

namespace {

// With the status line (at most about 45 bytes), under the field allocator's 512-byte class;
// room for a long tenant's lease or policy.
constexpr std::size_t answer_field_room = 464;

}  // namespace

Response make_response(bhttp::status status, std::string_view content_type, std::string_view body,
                       unsigned version, bool keep_alive) {
    Response res{status, version};
    res.set(bhttp::field::content_type, content_type);
    res.set(bhttp::field::cache_control, "no-store");
    res.keep_alive(keep_alive);
    res.body().assign(body.data(), body.size());
    res.prepare_payload();
    return res;
}

Response json_response(bhttp::status status, std::string_view body, unsigned version, bool keep_alive) {
    return make_response(status, "application/json", body, version, keep_alive);
}

Response json_response(const Request& req, bhttp::status status, std::string_view body) {
    return json_response(status, body, req.version(), req.keep_alive());
}

RenderedAnswer json_answer(bhttp::status status, PooledString body, unsigned version, bool keep_alive) {
    // A check's field lines (these, its rate-limit lines, X-Request-Id) take some 250 bytes:
    // room for them at once, rather than the text grown (and copied) three times on the way.
    RenderedAnswer res(status, version, keep_alive, answer_field_room);
    res.add_field_lines("Content-Type: application/json\r\nCache-Control: no-store\r\n");
    res.body(std::move(body));
    return res;
}

}  // namespace ratelimitd::http
