// Running a scenario whose expectations hold only while its calls share one window (an aligned
// unit's, or the time before a refill), again when the clock or the scheduler split it.
#pragma once

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

namespace ratelimitd::test {

/// Reports failures held back from an attempt, where they happened.
inline void report_held_back(const ::testing::TestPartResultArray& failures) {
    for (int i = 0; i < failures.size(); ++i) {
        const ::testing::TestPartResult& f = failures.GetTestPartResult(i);
        if (!f.failed()) continue;
        ADD_FAILURE_AT(f.file_name() != nullptr ? f.file_name() : "?", f.line_number()) << f.message();
    }
}

/// Runs `attempt(n)` (n = 0, 1, ...) until one returns true: its calls all landed where the
/// scenario's answers are the only right ones (one window, no refill yet). The failures of an
/// attempt that returned false are dropped: a window that ended mid-attempt restarts the counts,
/// so the answers after it differ on a correct server too, and that attempt says nothing. The
/// held attempt's failures are reported, so a wrong answer within a held window still fails;
/// no attempt held fails the test. Each attempt must start afresh (new values, or flushed
/// counters). Failures on other threads (clients the attempt runs) are held back too.
template <class Attempt>
bool until_held(Attempt attempt, int attempts = 5) {
    for (int n = 0; n < attempts; ++n) {
        ::testing::TestPartResultArray failures;
        bool held = false;
        {
            const ::testing::ScopedFakeTestPartResultReporter hold_back(
                ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS, &failures);
            held = attempt(n);
        }
        if (held) {
            report_held_back(failures);
            return true;
        }
    }
    ADD_FAILURE() << "no attempt of " << attempts << " held its window";
    return false;
}

/// The aligned window of `unit` holding now, by the system clock (the sidecar's and Redis').
inline std::int64_t aligned_window(std::chrono::seconds unit) {
    return std::chrono::system_clock::now().time_since_epoch() / unit;
}

/// until_held for a scenario whose calls must share one aligned window of `unit` (an Envoy
/// unit's, a notify marker's): `attempt(n)` returns nothing; it held when the window it began
/// in is still the one holding now when it ends.
template <class Attempt>
bool in_one_window(std::chrono::seconds unit, Attempt attempt, int attempts = 5) {
    return until_held(
        [&](int n) {
            const std::int64_t window = aligned_window(unit);
            attempt(n);
            return aligned_window(unit) == window;
        },
        attempts);
}

/// until_held for a scenario whose calls must all land before a change that time alone brings
/// (a refill, the end of a window its first call opened): `attempt(n)` returns nothing; it held
/// when it ended within `quiet` of its start.
template <class Attempt>
bool within(std::chrono::steady_clock::duration quiet, Attempt attempt, int attempts = 5) {
    return until_held(
        [&](int n) {
            const auto start = std::chrono::steady_clock::now();
            attempt(n);
            return std::chrono::steady_clock::now() - start < quiet;
        },
        attempts);
}

}  // namespace ratelimitd::test
