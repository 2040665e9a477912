// GrpcMetrics: atomic counters rendered as Prometheus text.
#include "ratelimitd/grpc/grpc_metrics.hpp"

#include <fmt/format.h>

#include <string_view>

namespace ratelimitd::rls {

namespace {

constexpr std::array<std::string_view, grpc_method_count> method_names{"ShouldRateLimit", "Check"};
constexpr std::array<std::string_view, rls_answer_count> answer_names{"OK", "OVER_LIMIT", "error"};
// grpc::StatusCode's names, by number (the numbers are fixed by the gRPC protocol).
constexpr std::array<std::string_view, 17> code_names{
    "OK",        "CANCELLED",        "UNKNOWN",        "INVALID_ARGUMENT",  "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};

}  // namespace

void GrpcMetrics::count_call(GrpcMethod method, int status_code, std::chrono::steady_clock::duration took) noexcept {
    const auto code = status_code >= 0 && static_cast<std::size_t>(status_code) < status_codes
                          ? static_cast<std::size_t>(status_code)
                          : std::size_t{2};  // UNKNOWN: never out of bounds, whatever is passed
    calls_[static_cast<std::size_t>(method)][code].fetch_add(1, std::memory_order_relaxed);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(took).count();
    const double seconds = static_cast<double>(ns) / 1e9;
    for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
        if (seconds <= latency_buckets[i]) latency_counts_[i].fetch_add(1, std::memory_order_relaxed);
    }
    latency_count_.fetch_add(1, std::memory_order_relaxed);
    latency_sum_ns_.fetch_add(ns > 0 ? static_cast<std::uint64_t>(ns) : 0, std::memory_order_relaxed);
}

void GrpcMetrics::count_answer(RlsAnswer answer) noexcept {
    answers_[static_cast<std::size_t>(answer)].fetch_add(1, std::memory_order_relaxed);
}

std::string GrpcMetrics::render() const {
    std::string out;
    out += "# HELP ratelimitd_grpc_requests_total gRPC calls finished, by method and status code.\n"
           "# TYPE ratelimitd_grpc_requests_total counter\n";
    for (std::size_t m = 0; m < grpc_method_count; ++m) {
        for (std::size_t c = 0; c < status_codes; ++c) {
            const auto n = calls_[m][c].load(std::memory_order_relaxed);
            // Only codes that happened: 17 codes x methods of zeros would drown the page.
            if (n == 0 && c != 0) continue;
            fmt::format_to(std::back_inserter(out), "ratelimitd_grpc_requests_total{{method=\"{}\",code=\"{}\"}} {}\n",
                           method_names[m], code_names[c], n);
        }
    }
    out += "# HELP ratelimitd_rls_answers_total ShouldRateLimit answers, by overall_code (error: no answer).\n"
           "# TYPE ratelimitd_rls_answers_total counter\n";
    for (std::size_t a = 0; a < rls_answer_count; ++a) {
        fmt::format_to(std::back_inserter(out), "ratelimitd_rls_answers_total{{code=\"{}\"}} {}\n", answer_names[a],
                       answers_[a].load(std::memory_order_relaxed));
    }
    out += "# HELP ratelimitd_grpc_request_duration_seconds Time from a call's arrival to its answer.\n"
           "# TYPE ratelimitd_grpc_request_duration_seconds histogram\n";
    for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
        fmt::format_to(std::back_inserter(out), "ratelimitd_grpc_request_duration_seconds_bucket{{le=\"{}\"}} {}\n",
                       latency_buckets[i], latency_counts_[i].load(std::memory_order_relaxed));
    }
    const auto count = latency_count_.load(std::memory_order_relaxed);
    fmt::format_to(std::back_inserter(out),
                   "ratelimitd_grpc_request_duration_seconds_bucket{{le=\"+Inf\"}} {}\n"
                   "ratelimitd_grpc_request_duration_seconds_sum {}\n"
                   "ratelimitd_grpc_request_duration_seconds_count {}\n",
                   count, static_cast<double>(latency_sum_ns_.load(std::memory_order_relaxed)) / 1e9, count);
    fmt::format_to(std::back_inserter(out),
                   "# HELP ratelimitd_grpc_connections_refused_total gRPC connections closed at once because "
                   "grpc_max_connections were open.\n"
                   "# TYPE ratelimitd_grpc_connections_refused_total counter\n"
                   "ratelimitd_grpc_connections_refused_total {}\n",
                   connections_refused_.load(std::memory_order_relaxed));
    out += quota_.render();
    return out;
}

}  // namespace ratelimitd::rls
