// POST /v1/report: charge after the fact. One of Router's endpoint handlers (router.hpp), kept
// in its own file: planned as a check, decided by the same CheckService::decide in report mode,
// answered as a check (always 200: a report is charged without asking). A negative cost gives
// units back: the router's admin rule decides who may, and every refund is logged and counted.
#include "ratelimitd/core/hex.hpp"
#include "ratelimitd/core/log_value.hpp"
#include "ratelimitd/http/check_codec.hpp"
#include "ratelimitd/http/report_codec.hpp"
#include "ratelimitd/http/router.hpp"
#include "ratelimitd/policy/report_plan.hpp"

#include <openssl/sha.h>
#include <spdlog/spdlog.h>

#include <vector>

namespace ratelimitd::http {

namespace {

// A store key named in a log line: the first 16 hex digits of its SHA-256, enough to match
// lines about one key, without writing the tenant's key out.
std::string key_hash(std::string_view key) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
    return to_hex(std::span<const unsigned char>(digest, 8));
}

// What a refund's log line and counter name, taken from the plan before deciding moves it.
struct RefundedLimit {
    std::string policy;
    std::string key_hash;
};

std::vector<RefundedLimit> refunded_limits(const policy::CheckPlan& plan) {
    std::vector<RefundedLimit> out;
    for (const auto& limit : plan.limits) {
        out.push_back({limit.policy->name, limit.windows.empty() ? "" : key_hash(limit.windows.front().key)});
    }
    return out;
}

}  // namespace

boost::asio::awaitable<Response> Router::report(const EndpointCall& call) {
    const Request& req = call.req;
    auto parsed = parse_report_json(req.body());
    if (!parsed) co_return make_error_response(parsed.error(), req.version(), req.keep_alive());
    const bool refund = parsed->cost < 0;
    // Giving units back is an operator's act (door: admin_to_give_back); refused before
    // anything is planned or charged.
    if (refund) {
        if (auto refusal = give_back_refusal(call)) co_return std::move(*refusal);
    }
    auto plan = policy::plan_report(service_.registry(), *parsed);
    if (!plan) co_return make_error_response(plan.error(), req.version(), req.keep_alive());
    const auto refunded = refund ? refunded_limits(*plan) : std::vector<RefundedLimit>{};
    const auto decision = co_await service_.decide(std::move(*plan));
    if (refund && decision.limited && !decision.degraded) {
        const auto units = static_cast<std::uint64_t>(-parsed->cost);
        for (const auto& limit : refunded) {
            spdlog::info("refund policy={} key_hash={} units={} peer={} request_id={}", limit.policy,
                         limit.key_hash, units, log_value(call.ctx.peer), call.request_id);
            metrics_.count_refund(limit.policy, units);
        }
    }
    auto res = make_check_response(decision, req.version(), req.keep_alive());
    access_log(decision, res.result_int(), call.request_id);
    co_return res;
}

}  // namespace ratelimitd::http
