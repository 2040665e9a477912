// windows_of and expect_within_bound: admissions binned by window, checked against the bound.
#include "support/quota_windows.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace ratelimitd::test {

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void run_windows(int windows, std::int64_t window_ms) {
    const std::int64_t until = (now_ms() / window_ms + 1 + windows) * window_ms + 50;
    std::this_thread::sleep_for(std::chrono::milliseconds(until - now_ms()));
}

std::map<std::int64_t, QuotaWindow> windows_of(const std::vector<const QuotaFilter*>& clients, std::int64_t from,
                                               std::int64_t to, std::int64_t window_ms) {
    std::map<std::int64_t, QuotaWindow> out;
    const std::int64_t first = (from + window_ms - 1) / window_ms;
    const std::int64_t last = to / window_ms;  // exclusive
    for (std::int64_t k = first; k < last; ++k) out[k].per_client.assign(clients.size(), 0);
    for (std::size_t c = 0; c < clients.size(); ++c) {
        for (const std::int64_t t : clients[c]->admitted()) {
            if (auto it = out.find(t / window_ms); it != out.end()) {
                ++it->second.admitted;
                ++it->second.per_client[c];
            }
        }
        for (const std::int64_t t : clients[c]->stream_starts()) {
            if (auto it = out.find(t / window_ms); it != out.end()) ++it->second.new_streams;
        }
    }
    return out;
}

void expect_within_bound(const std::map<std::int64_t, QuotaWindow>& windows, const char* phase,
                         std::int64_t global_limit) {
    for (const auto& [k, w] : windows) {
        const std::int64_t bound = global_limit + 2 * w.new_streams;
        std::string per;
        for (const auto n : w.per_client) per += " " + std::to_string(n);
        std::printf("%s window %lld: admitted %lld (bound %lld; per client%s)\n", phase, static_cast<long long>(k),
                    static_cast<long long>(w.admitted), static_cast<long long>(bound), per.c_str());
        EXPECT_LE(w.admitted, bound) << phase << " window " << k;
    }
}

}  // namespace ratelimitd::test
