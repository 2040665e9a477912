// run_concurrently: one std::thread per call; count_codes: atomic counters around it.
#include "support/concurrent_calls.hpp"

#include <atomic>
#include <thread>
#include <vector>

namespace ratelimitd::test {

void run_concurrently(int calls, const std::function<void(int)>& call) {
    std::vector<std::thread> callers;
    callers.reserve(static_cast<std::size_t>(calls));
    for (int i = 0; i < calls; ++i) callers.emplace_back([&call, i] { call(i); });
    for (auto& t : callers) t.join();
}

CodeCounts count_codes(int calls, const std::function<RlsResponse::Code(int)>& code_of) {
    std::atomic<int> ok{0}, over{0}, failed{0};
    run_concurrently(calls, [&](int i) {
        const auto code = code_of(i);
        (code == RlsResponse::OK ? ok : code == RlsResponse::OVER_LIMIT ? over : failed)++;
    });
    return {ok.load(), over.load(), failed.load()};
}

}  // namespace ratelimitd::test
