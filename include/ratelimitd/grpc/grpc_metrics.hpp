// Counters of the gRPC transport: calls by method and status code, and how long they took.
// The checks themselves are counted by the service (ratelimitd_checks_total, per policy).
#pragma once

#include "ratelimitd/grpc/quota_metrics.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ratelimitd::rls {

/// The gRPC methods ratelimitd serves.
enum class GrpcMethod : std::size_t { should_rate_limit, health_check };
inline constexpr std::size_t grpc_method_count = 2;

/// What a ShouldRateLimit call answered (RateLimitResponse.overall_code), or that it failed.
enum class RlsAnswer : std::size_t { ok, over_limit, error };
inline constexpr std::size_t rls_answer_count = 3;

/// Lock-free counters, written from any lane and read at scrape.
/// @par Thread Safety
/// Every member may be called from any thread.
class GrpcMetrics {
public:
    /// Upper bounds (seconds) of the call latency histogram's buckets.
    static constexpr std::array<double, 10> latency_buckets{0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                            0.01,    0.025,  0.05,  0.1,    0.5};

    /// One finished call: its gRPC status code (0..16) and how long it took.
    void count_call(GrpcMethod method, int status_code, std::chrono::steady_clock::duration took) noexcept;
    /// One ShouldRateLimit answer by overall code.
    void count_answer(RlsAnswer answer) noexcept;
    /// A connection closed at once because grpc_max_connections were open.
    void count_connection_refused() noexcept { connections_refused_.fetch_add(1, std::memory_order_relaxed); }

    /// The rate limit quota service's counters (rendered with these).
    [[nodiscard]] QuotaMetrics& quota() noexcept { return quota_; }

    /// Prometheus text of every series (appended to /metrics).
    [[nodiscard]] std::string render() const;

private:
    static constexpr std::size_t status_codes = 17;  // grpc::StatusCode OK..UNAUTHENTICATED
    std::array<std::array<std::atomic<std::uint64_t>, status_codes>, grpc_method_count> calls_{};
    std::array<std::atomic<std::uint64_t>, rls_answer_count> answers_{};
    std::array<std::atomic<std::uint64_t>, latency_buckets.size()> latency_counts_{};
    std::atomic<std::uint64_t> latency_count_{0};
    std::atomic<std::uint64_t> latency_sum_ns_{0};
    std::atomic<std::uint64_t> connections_refused_{0};
    QuotaMetrics quota_;
};

}  // namespace ratelimitd::rls
