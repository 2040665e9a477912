// add_erl_headers: the descriptor envoyproxy/ratelimit's service reports, and its three fields.
#include "ratelimitd/grpc/erl_headers.hpp"

#include "ratelimitd/policy/rls_domain.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace ratelimitd::rls {
namespace {

using Response = envoy::service::ratelimit::v3::RateLimitResponse;

/// A descriptor whose OVER_LIMIT denies on its own (not quota mode).
bool enforced_over(const policy::RlsPlan& plan, std::size_t i, const Response::DescriptorStatus& status) {
    const auto& dp = plan.descriptors[i];
    if (status.code() != Response::OVER_LIMIT || dp.kind != policy::RlsDescriptorPlan::Kind::limited) return false;
    return !plan.check.limits[dp.limit].quota;
}

/// The index of the status reported, or -1: the same walk as envoyproxy/ratelimit's
/// service, where an enforced denial takes the place whatever came before it.
int reported_status(const policy::RlsPlan& plan, const Response& out) {
    int picked = -1;
    std::uint64_t least = std::numeric_limits<std::uint32_t>::max();
    const auto n = std::min<std::size_t>(plan.descriptors.size(), static_cast<std::size_t>(out.statuses_size()));
    for (std::size_t i = 0; i < n; ++i) {
        const auto& status = out.statuses(static_cast<int>(i));
        if (!status.has_current_limit()) continue;  // no match, unlimited
        if (status.limit_remaining() < least) {
            picked = static_cast<int>(i);
            least = status.limit_remaining();
        }
        if (enforced_over(plan, i, status)) {
            picked = static_cast<int>(i);
            least = 0;
        }
    }
    return picked;
}

void add(Response& out, const std::string& name, std::string value) {
    auto* h = out.add_response_headers_to_add();
    h->set_key(name);
    h->set_value(std::move(value));
}

}  // namespace

void add_erl_headers(const policy::RlsPlan& plan, std::int64_t now_s, const ErlHeaderNames& names, Response& out) {
    const int i = reported_status(plan, out);
    if (i < 0) return;
    const auto& status = out.statuses(i);
    const auto unit = static_cast<policy::RlsUnit>(static_cast<int>(status.current_limit().unit()));
    const std::int64_t unit_s = policy::unit_seconds(unit);
    add(out, names.limit, std::to_string(status.current_limit().requests_per_unit()));
    add(out, names.remaining, std::to_string(status.limit_remaining()));
    add(out, names.reset, std::to_string(unit_s > 0 ? unit_s - now_s % unit_s : 0));
}

}  // namespace ratelimitd::rls
