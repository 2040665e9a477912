// build_response: each descriptor's status from the windows of its own limit.
#include "ratelimitd/grpc/response_builder.hpp"

#include "ratelimitd/grpc/erl_headers.hpp"

#include "ratelimitd/headers/rate_limit_fields.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace ratelimitd::rls {

namespace {

using Response = envoy::service::ratelimit::v3::RateLimitResponse;

std::uint32_t clamp_u32(std::int64_t n) {
    return static_cast<std::uint32_t>(std::clamp<std::int64_t>(n, 0, std::numeric_limits<std::uint32_t>::max()));
}

void set_duration(const check::WindowState& w, std::int64_t window_end_s, std::int64_t now_s,
                  google::protobuf::Duration& out) {
    // A window aligned to the unit ends for everyone at once: until then. Otherwise a denied
    // window resets when a retry can pass (token buckets refill before the window ends), an
    // open one when its count starts over.
    const std::int64_t ms = window_end_s > 0 ? (window_end_s - now_s) * 1000
                            : w.allowed      ? w.reset_after_ms
                                             : headers::retry_after_of(w) * 1000;
    const std::int64_t clamped = std::max<std::int64_t>(ms, 0);
    out.set_seconds(clamped / 1000);
    out.set_nanos(static_cast<std::int32_t>((clamped % 1000) * 1'000'000));
}

// current_limit from the plan: the rule that decides this descriptor.
void set_current_limit(const policy::RlsDescriptorPlan& dp, Response::DescriptorStatus& status) {
    auto& limit = *status.mutable_current_limit();
    limit.set_name(dp.name);
    limit.set_requests_per_unit(dp.requests_per_unit);
    limit.set_unit(static_cast<Response::RateLimit::Unit>(static_cast<int>(dp.unit)));
}

void fill_limited(const service::Decision& d, const policy::RlsPlan& plan, const policy::RlsDescriptorPlan& dp,
                  std::int64_t now_s, Response::DescriptorStatus& status) {
    set_current_limit(dp, status);
    // The rule's shadow_mode only: a quota limit over its own limit says so (quota_mode).
    const bool shadow = dp.limit < plan.check.limits.size() && plan.check.limits[dp.limit].policy->shadow;
    if (d.degraded) {
        // No numbers are known; the failure mode decided the whole call.
        status.set_code(d.verdict.allowed || shadow ? Response::OK : Response::OVER_LIMIT);
        return;
    }
    const check::WindowState* w = d.window_of(dp.limit);
    if (!w) {
        // Not decided: another limit denied first and the call charged nothing, so there is
        // no number to report.
        status.set_code(Response::OK);
        return;
    }
    status.set_code(!w->allowed && !shadow ? Response::OVER_LIMIT : Response::OK);
    status.set_limit_remaining(clamp_u32(w->remaining));
    set_duration(*w, dp.window_end_s, now_s, *status.mutable_duration_until_reset());
}

// An unlimited descriptor: OK with no current_limit and, as envoyproxy/ratelimit answers it,
// limit_remaining UINT32_MAX (no limit is ever reached).
void fill_unlimited(Response::DescriptorStatus& status) {
    status.set_code(Response::OK);
    status.set_limit_remaining(std::numeric_limits<std::uint32_t>::max());
}

// Envoy adds these to the client's response: the values an HTTP check answer carries.
class AddedHeaders final : public headers::HeaderSink {
public:
    explicit AddedHeaders(Response& out) : out_(out) {}
    void set(std::string_view name, std::string_view value) override {
        auto* h = out_.add_response_headers_to_add();
        h->set_key(std::string(name));
        h->set_value(std::string(value));
    }

private:
    Response& out_;
};

using headers::RateLimitHeader;

constexpr std::array ietf_lines{RateLimitHeader::policy, RateLimitHeader::rate_limit};
// The X-RateLimit-* fields and Retry-After too, exactly as an HTTP check answer sets them.
constexpr std::array ietf_and_x_lines{RateLimitHeader::policy,  RateLimitHeader::rate_limit,
                                      RateLimitHeader::x_limit, RateLimitHeader::x_remaining,
                                      RateLimitHeader::x_reset, RateLimitHeader::retry_after};

// envoyproxy/ratelimit's quota_mode: the call is over when it has quota descriptors and
// every one of them says OVER_LIMIT (one under its limit lets the call through).
bool every_quota_over(const policy::RlsPlan& plan, const Response& out) {
    std::size_t quotas = 0;
    std::size_t over = 0;
    for (std::size_t i = 0; i < plan.descriptors.size(); ++i) {
        const auto& dp = plan.descriptors[i];
        if (dp.kind != policy::RlsDescriptorPlan::Kind::limited || !plan.check.limits[dp.limit].quota) continue;
        ++quotas;
        if (out.statuses(static_cast<int>(i)).code() == Response::OVER_LIMIT) ++over;
    }
    return quotas > 0 && over == quotas;
}

void add_headers(const service::Decision& decision, const policy::RlsPlan& plan, std::int64_t now_s,
                 const ResponseHeaders& headers, Response& out) {
    AddedHeaders added(out);
    switch (headers.set) {
    case HeaderSet::ietf: headers::set_rate_limit_headers(decision.verdict, ietf_lines, added); break;
    case HeaderSet::ietf_and_x: headers::set_rate_limit_headers(decision.verdict, ietf_and_x_lines, added); break;
    case HeaderSet::erl: add_erl_headers(plan, now_s, headers.names, out); break;
    case HeaderSet::none: break;
    }
}

}  // namespace

void build_response(const service::Decision& decision, const policy::RlsPlan& plan, std::int64_t now_s,
                    Response& out, const ResponseHeaders& headers) {
    for (const auto& dp : plan.descriptors) {
        auto& status = *out.add_statuses();
        if (dp.kind == policy::RlsDescriptorPlan::Kind::limited) {
            fill_limited(decision, plan, dp, now_s, status);
        } else if (dp.kind == policy::RlsDescriptorPlan::Kind::unlimited) {
            fill_unlimited(status);
        } else {
            status.set_code(Response::OK);
        }
    }
    const bool over = !decision.verdict.allowed || every_quota_over(plan, out);
    // envoy_shadow_mode: the descriptors say what was decided, the call is let through.
    out.set_overall_code(over && !plan.shadow_all ? Response::OVER_LIMIT : Response::OK);
    add_headers(decision, plan, now_s, headers, out);
}

bool shadowed_over(const Response& response, const policy::RlsPlan& plan) {
    if (!plan.shadow_all || response.overall_code() != Response::OK) return false;
    return std::any_of(response.statuses().begin(), response.statuses().end(),
                       [](const auto& status) { return status.code() == Response::OVER_LIMIT; });
}

void build_never_admitted_response(const policy::RlsPlan& plan, std::int64_t now_s, Response& out) {
    out.set_overall_code(plan.shadow_all ? Response::OK : Response::OVER_LIMIT);
    for (const auto& dp : plan.descriptors) {
        auto& status = *out.add_statuses();
        status.set_code(dp.never_admitted ? Response::OVER_LIMIT : Response::OK);
        if (dp.kind == policy::RlsDescriptorPlan::Kind::unlimited) fill_unlimited(status);
        if (dp.kind != policy::RlsDescriptorPlan::Kind::limited) continue;
        set_current_limit(dp, status);
        if (!dp.never_admitted) continue;  // not decided, as behind any other denial
        // No later call admits this cost either; the earliest a retry is worth anything is
        // when the window starts over: its end when aligned, else one unit from now.
        const std::int64_t seconds =
            dp.window_end_s > 0 ? dp.window_end_s - now_s : policy::unit_seconds(dp.unit);
        status.mutable_duration_until_reset()->set_seconds(std::max<std::int64_t>(seconds, 0));
    }
}

}  // namespace ratelimitd::rls
