// Fires calls at once from threads of their own, for the tests that count exactly under
// concurrency (every limit test does).
#pragma once

#include "support/rls_client.hpp"

#include <functional>

namespace ratelimitd::test {

/// Runs `call(i)` for every i in [0, calls), each on a thread of its own, all started before
/// any is joined; returns when every call has returned.
void run_concurrently(int calls, const std::function<void(int)>& call);

/// How the calls of one burst were answered.
struct CodeCounts {
    int ok = 0;      ///< RlsResponse::OK
    int over = 0;    ///< RlsResponse::OVER_LIMIT
    int failed = 0;  ///< anything else (UNKNOWN: the call itself failed)
};

/// `calls` concurrent calls, call i answered with `code_of(i)`: how many of each code.
CodeCounts count_codes(int calls, const std::function<RlsResponse::Code(int)>& code_of);

}  // namespace ratelimitd::test
