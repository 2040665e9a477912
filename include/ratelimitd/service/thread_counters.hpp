// The metrics one server thread writes on the hot path, merged by Metrics at each scrape.
#pragma once

#include "ratelimitd/service/owned_family.hpp"

#include <array>
#include <cstddef>
#include <string>

namespace ratelimitd::service {

/// Upper bounds (seconds) of ratelimitd_http_request_duration_seconds: from 50 µs (an
/// embedded-store check) up past the store deadline (50 ms by default, settable to seconds).
inline constexpr std::array<double, 15> http_duration_buckets{0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                                              0.0025,  0.005,  0.01,    0.025,  0.05,
                                                              0.1,     0.25,   0.5,     1.0,    2.5};

/// Upper bounds (seconds) of ratelimitd_store_latency_seconds.
inline constexpr std::array<double, 12> store_latency_buckets{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                              0.01,   0.025,   0.05,   0.1,   0.25,   1.0};

/// The cells of the store latency histogram: one per bucket (not cumulative), then the count
/// and the sum in nanoseconds.
inline constexpr std::size_t store_latency_count_cell = store_latency_buckets.size();
inline constexpr std::size_t store_latency_sum_cell = store_latency_count_cell + 1;

/// The cells of one policy's series.
enum PolicyCell : std::size_t {
    // 0..4: ratelimitd_checks_total by Outcome (its enum value)
    near_limit_cell = 5,
    units_allowed_cell = 6,
    units_denied_cell = 7,
    denial_cache_hit_cell = 8,
    refunds_cell = 9,         ///< reports with a negative cost (units given back)
    refunded_units_cell = 10,
    policy_cell_count = 11,
};

/// The cells of one route's duration series: one per bucket (not cumulative), then the count
/// and the sum in nanoseconds.
inline constexpr std::size_t duration_count_cell = http_duration_buckets.size();
inline constexpr std::size_t duration_sum_cell = duration_count_cell + 1;

/// One thread's counters. Made by Metrics the first time a thread counts, linked into its
/// list of shards and freed with it.
/// @par Thread Safety
/// Written by its thread only; the families are read by the scrape from any thread.
struct ThreadCounters {
    OwnedFamily<policy_cell_count> policies;  ///< labels: policy="..."
    OwnedFamily<1> http_requests;             ///< labels: route="...",status="..."
    OwnedFamily<duration_sum_cell + 1> http_durations;  ///< labels: route="..."
    std::array<OwnedCounter, store_latency_sum_cell + 1> store_latency;  ///< no labels
    /// ratelimitd_requests_in_flight is the sum over the threads of started - finished (a
    /// request may finish on another thread than it started on: the sum stays right).
    OwnedCounter requests_started;
    OwnedCounter requests_finished;
    /// The label text being looked up; it keeps its capacity, so counting allocates nothing.
    std::string scratch;
    /// The series each hot counter used last, by the name it was asked for: a run of checks of
    /// one policy on one route finds them without rendering and hashing a label each time
    /// (series never move nor die before their family).
    std::string last_policy;
    OwnedFamily<policy_cell_count>::Cells* last_policy_cells = nullptr;
    std::string last_request_route;
    unsigned last_request_status = 0;
    OwnedFamily<1>::Cells* last_request_cells = nullptr;
    std::string last_duration_route;
    OwnedFamily<duration_sum_cell + 1>::Cells* last_duration_cells = nullptr;
    ThreadCounters* next = nullptr;  ///< the next shard of the same Metrics (set before publishing)
};

}  // namespace ratelimitd::service
