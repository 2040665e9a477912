// POST /v1/report: charge after the fact. One of Router's endpoint handlers (router.hpp), kept
// in its own file: planned as a check, decided by the same CheckService::decide in report mode,
// answered as a check (always 200: a report is charged without asking).
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/report_codec.hpp"
#include "ratelimitd/http/router.hpp"
#include "ratelimitd/policy/report_plan.hpp"

namespace ratelimitd::http {

boost::asio::awaitable<Response> Router::report(const EndpointCall& call) {
    const Request& req = call.req;
    auto parsed = parse_report_json(req.body());
    if (!parsed) co_return make_error_response(parsed.error(), req.version(), req.keep_alive());
    auto plan = policy::plan_report(service_.registry(), *parsed);
    if (!plan) co_return make_error_response(plan.error(), req.version(), req.keep_alive());
    const auto decision = co_await service_.decide(std::move(*plan));
    auto res = make_check_response(decision, req.version(), req.keep_alive());
    access_log(decision, res.result_int(), call.request_id);
    co_return res;
}

}  // namespace ratelimitd::http
