// The JSON and error answers of the state endpoints (state_response.hpp).
#include "ratelimitd/http/state_response.hpp"

#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/json_response.hpp"

namespace ratelimitd::http {

Response state_json_response(const Request& req, bhttp::status status, const nlohmann::ordered_json& body) {
    return json_response(req, status, body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

Response state_error_response(const Request& req, const Problem& problem) {
    auto res = make_error_response(problem, req.version(), req.keep_alive());
    if (problem.code == errc::store_unavailable || problem.code == errc::store_timeout) {
        res.result(bhttp::status::service_unavailable);
    }
    return res;
}

}  // namespace ratelimitd::http
