// AccessLog: which decided checks get a line, and the line.
#include "ratelimitd/http/access_log.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <random>

namespace ratelimitd::http {

void AccessLog::write(const service::Decision& d, unsigned status, std::string_view request_id) {
    // Shadow denials are what a limit's rollout watches: logged whatever the mode, within the
    // same sampling and per-second cap.
    if (!d.shadow_denied) {
        if (options_.access_log == AccessLogMode::off) return;
        if (options_.access_log == AccessLogMode::denied && d.verdict.allowed) return;
    }
    if (options_.access_log_sample < 1.0) {
        static thread_local std::minstd_rand rng{std::random_device{}()};
        if (std::uniform_real_distribution<double>(0.0, 1.0)(rng) >= options_.access_log_sample) return;
    }
    // At most access_log_per_second lines per second on this thread, so a flood of denials
    // cannot turn into a flood of log lines.
    const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::steady_clock::now().time_since_epoch()).count();
    if (now_s != log_second_) {
        log_second_ = now_s;
        log_lines_ = 0;
    }
    if (++log_lines_ > options_.access_log_per_second) {
        metrics_.count_access_log_dropped();
        return;
    }
    const auto verdict = d.degraded ? (d.verdict.allowed ? "degraded_allowed" : "failed_closed")
                                    : (!d.verdict.allowed ? "denied" : d.shadow_denied ? "shadow_denied" : "allowed");
    spdlog::info("access request_id={} policy={} tenant={} scope={} verdict={} status={}", request_id, d.policy,
                 d.tenant, d.scope, verdict, status);
}

}  // namespace ratelimitd::http
