// POST /json: protobuf JSON in, the rls road, protobuf JSON out.
#include "ratelimitd/grpc/json_call.hpp"

#include "ratelimitd/road/road.hpp"
#include "ratelimitd/grpc/response_builder.hpp"

#include <google/protobuf/util/json_util.h>
#include <spdlog/spdlog.h>

#include <chrono>

namespace ratelimitd::rls {

namespace net = boost::asio;
using envoy::service::ratelimit::v3::RateLimitRequest;
using envoy::service::ratelimit::v3::RateLimitResponse;

namespace {

// envoy_store_error: unavailable. envoyproxy/ratelimit's /json answers a store error 500.
bool is_store_failure(errc code) { return code == errc::store_unavailable || code == errc::store_timeout; }

road::RlsJsonAnswer bad_request(std::string_view why) {
    spdlog::debug("POST /json refused: {}", why);
    return {400, "Bad Request\n"};
}

net::awaitable<road::RlsJsonAnswer> answer_json(const road::Road& road, std::string body, RequestLimits limits,
                                                ResponseHeaders headers, stats::ErlStats* erl_stats) {
    RateLimitRequest request;
    const auto parsed = google::protobuf::util::JsonStringToMessage(body, &request);
    if (!parsed.ok()) co_return bad_request(std::string(parsed.message()));
    auto decoded = decode_request(request, limits);
    if (!decoded) co_return bad_request(decoded.error().detail);
    policy::RlsPlan plan;
    road::Call asked(road::Ask::rls);
    asked.rls = &*decoded;
    asked.rls_plan = &plan;
    co_await road.decide(asked);
    if (asked.problem && erl_stats) erl_stats->count_failure(asked.problem->code);
    if (asked.problem && is_store_failure(asked.problem->code)) co_return road::RlsJsonAnswer{500, "Internal Server Error\n"};
    if (asked.problem) co_return bad_request(asked.problem->detail);
    const auto now_s =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    RateLimitResponse response;
    if (plan.never_admitted) {
        build_never_admitted_response(plan, now_s, response);
    } else {
        build_response(asked.decision, plan, now_s, response, headers);
    }
    if (erl_stats) {
        const bool never = plan.never_admitted;
        erl_stats->count_call(*decoded, plan, never ? nullptr : &asked.decision, shadowed_over(response, plan));
    }
    road::RlsJsonAnswer answer;
    if (!google::protobuf::util::MessageToJsonString(response, &answer.body).ok())
        co_return road::RlsJsonAnswer{500, ""};
    answer.status = response.overall_code() == RateLimitResponse::OVER_LIMIT ? 429
                    : response.overall_code() == RateLimitResponse::OK       ? 200
                                                                             : 500;
    co_return answer;
}

}  // namespace

road::RlsJson make_rls_json(RequestLimits limits, ResponseHeaders headers, stats::ErlStats* erl_stats) {
    return [limits, headers, erl_stats](const road::Road& road, std::string_view body) {
        // The body is copied into the coroutine: it outlives nothing it points
        // into.
        return answer_json(road, std::string(body), limits, headers, erl_stats);
    };
}

}  // namespace ratelimitd::rls
