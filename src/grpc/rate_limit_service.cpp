// RateLimitService: post to a lane, decode, take the road (road::Road::decide, Ask::rls) there,
// encode and Finish from the lane.
#include "ratelimitd/grpc/rate_limit_service.hpp"

#include "ratelimitd/road/road.hpp"
#include "ratelimitd/grpc/response_builder.hpp"
#include "ratelimitd/grpc/rls_call_span.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>

namespace ratelimitd::rls {

namespace net = boost::asio;
using envoy::service::ratelimit::v3::RateLimitRequest;
using envoy::service::ratelimit::v3::RateLimitResponse;
using Clock = std::chrono::steady_clock;

namespace {

/// One call in flight: what it needs until Finish, which may be called from any thread.
struct Call {
    const RateLimitRequest* request;
    RateLimitResponse* response;
    grpc::ServerUnaryReactor* reactor;
    GrpcMetrics* metrics;
    Clock::time_point arrived;
    stats::ErlStats* erl_stats;
    /// Set only when tracing is on and the call is sampled: the span's identity and where it goes.
    std::shared_ptr<const RlsTrace> trace{};
    const road::Call* decided = nullptr;  ///< the road's call once decided (the span's attributes)
    std::string_view domain{};            ///< the request's, once decoded (the span's)
    /// When the call went to the road and came back: the store span's times (read only when
    /// the call is traced).
    Clock::time_point handed{};
    Clock::time_point answered{};

    void finish(const grpc::Status& status, RlsAnswer answer) const {
        if (trace) trace_rls_call(*trace, {arrived, handed, answered}, decided, domain, status.error_code());
        metrics->count_answer(answer);
        metrics->count_call(GrpcMethod::should_rate_limit, static_cast<int>(status.error_code()),
                            Clock::now() - arrived);
        reactor->Finish(status);  // the last touch: gRPC may free request and response now
    }
    void refuse(const Problem& why) const {
        if (erl_stats) erl_stats->count_failure(why.code);
        finish(grpc::Status(status_code(why.code), why.detail), RlsAnswer::error);
    }

    static grpc::StatusCode status_code(errc code) {
        switch (code) {
        // No config from the control plane yet: UNKNOWN, as envoyproxy/ratelimit's service error.
        case errc::config_pending: return grpc::StatusCode::UNKNOWN;
        // envoy_store_error: unavailable. Envoy's failure_mode_deny decides.
        case errc::store_unavailable:
        case errc::store_timeout: return grpc::StatusCode::UNAVAILABLE;
        default: return grpc::StatusCode::INVALID_ARGUMENT;  // policy::rls_refusals' rows
        }
    }
};

// `headers` is the service's own: it outlives every call (the server drains calls before
// the service goes), and a reference keeps the names out of each call's frame.
net::awaitable<void> answer(Call call, const road::Road& road, RequestLimits limits,
                            const ResponseHeaders& headers) {
    try {
        auto request = decode_request(*call.request, limits);
        if (!request) co_return call.refuse(request.error());
        policy::RlsPlan plan;
        road::Call asked(road::Ask::rls);
        call.decided = &asked;
        call.domain = request->domain;
        asked.rls = &*request;
        asked.rls_plan = &plan;
        if (call.trace) call.handed = Clock::now();
        co_await road.decide(asked);
        if (call.trace) call.answered = Clock::now();
        if (asked.problem) co_return call.refuse(*asked.problem);
        const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
        if (plan.never_admitted) {
            // A cost no window can ever admit: a denial, not an error (Envoy lets an error
            // through unless failure_mode_deny), and nothing is charged.
            build_never_admitted_response(plan, now_s, *call.response);
            if (call.erl_stats) call.erl_stats->count_call(*request, plan, nullptr, plan.shadow_all);
            co_return call.finish(grpc::Status::OK, RlsAnswer::over_limit);
        }
        const service::Decision& decision = asked.decision;
        build_response(decision, plan, now_s, *call.response, headers);
        // The answer's own code: quota descriptors all over deny a call the store admitted.
        const bool over =
            !decision.verdict.allowed || call.response->overall_code() == RateLimitResponse::OVER_LIMIT;
        if (call.erl_stats) {
            call.erl_stats->count_call(*request, plan, &decision, shadowed_over(*call.response, plan));
        }
        call.finish(grpc::Status::OK, over ? RlsAnswer::over_limit : RlsAnswer::ok);
    } catch (const std::exception& e) {
        // decide never throws; an allocation failure could. Answer rather than leave Envoy
        // waiting for its timeout.
        spdlog::error("grpc ShouldRateLimit: {}", e.what());
        // Both lived in the try block's scope, gone now.
        call.decided = nullptr;
        call.domain = {};
        call.finish(grpc::Status(grpc::StatusCode::INTERNAL, "internal error"), RlsAnswer::error);
    }
}

}  // namespace

grpc::ServerUnaryReactor* RateLimitService::ShouldRateLimit(grpc::CallbackServerContext* context,
                                                            const RateLimitRequest* request,
                                                            RateLimitResponse* response) {
    auto* reactor = context->DefaultReactor();
    const auto& lane = lanes_.next();
    // Nothing blocks this gRPC thread: the lane does the work and finishes the reactor.
    Call call{request, response, reactor, &metrics_, Clock::now(), erl_stats_};
    // One predictable branch when tracing is off; the metadata is read only when it is on.
    if (tracer_ != nullptr) call.trace = start_rls_trace(*tracer_, *context, trace_store_name_);
    if (erl_stats_) erl_stats_->count_grpc_call();
    net::co_spawn(lane.executor, answer(call, lane.road, limits_, headers_), net::detached);
    return reactor;
}

}  // namespace ratelimitd::rls
