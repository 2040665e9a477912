// budget_connections(): getrlimit/setrlimit on RLIMIT_NOFILE, and the share of each listener.
#include "ratelimitd/app/fd_limit.hpp"

#include <spdlog/spdlog.h>

#include <sys/resource.h>

#include <algorithm>

namespace ratelimitd::app {

ConnectionBudget share_descriptors(std::size_t available, std::size_t http, std::size_t grpc) {
    if (grpc == 0) return {std::max<std::size_t>(1, std::min(http, available)), 0};
    if (http + grpc <= available) return {http, grpc};
    const std::size_t half = available / 2;
    // HTTP takes its half, or more when gRPC asks for less than its own half.
    const std::size_t http_share = std::min(http, std::max(half, available > grpc ? available - grpc : 0));
    const std::size_t grpc_share = std::min(grpc, available - http_share);
    return {std::max<std::size_t>(1, http_share), std::max<std::size_t>(1, grpc_share)};
}

ConnectionBudget budget_connections(std::size_t http, std::size_t grpc) {
    const std::size_t reserved = reserved_descriptors + (grpc > 0 ? grpc_reserved_descriptors : 0);
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return {http, grpc};
    const auto needed = static_cast<rlim_t>(http + grpc + reserved);
    if (lim.rlim_cur >= needed) return {http, grpc};
    const rlim_t before = lim.rlim_cur;
    lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? needed : std::min(needed, lim.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) lim.rlim_cur = before;
    if (lim.rlim_cur >= needed) {
        spdlog::debug("open-file limit raised from={} to={} max_connections={} grpc_max_connections={}",
                      static_cast<unsigned long long>(before), static_cast<unsigned long long>(lim.rlim_cur), http,
                      grpc);
        return {http, grpc};
    }
    const auto available = static_cast<std::size_t>(lim.rlim_cur > reserved ? lim.rlim_cur - reserved : 0);
    const auto budget = share_descriptors(available, http, grpc);
    // Fields last, so the sentence stays whole in a JSON line's msg (app/log_fields.hpp).
    spdlog::warn("open-file limit below max_connections plus reserved descriptors: each listener keeps its share, "
                 "and connections beyond it are refused; raise the limit (ulimit -n, LimitNOFILE=) or lower "
                 "max_connections limit={} max_connections={} grpc_max_connections={} reserved={} http_cap={} "
                 "grpc_cap={}",
                 static_cast<unsigned long long>(lim.rlim_cur), http, grpc, reserved, budget.http, budget.grpc);
    return budget;
}

}  // namespace ratelimitd::app
