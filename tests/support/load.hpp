// Concurrent load helpers for limit tests: fire N requests over C connections, count verdicts.
#pragma once

#include "support/http_client.hpp"

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ratelimitd::test {

struct Tally {
    int allowed = 0;   ///< 200
    int denied = 0;    ///< 429
    int other = 0;     ///< anything else
    std::vector<HttpResponse> denials;
};

/// Sends `total` requests over `connections` concurrent keep-alive connections; `send` makes
/// one request on the given client. Returns the count of each status.
inline Tally fire(unsigned short port, int total, int connections,
                  const std::function<HttpResponse(HttpClient&)>& send) {
    std::atomic<int> next{0};
    std::mutex mu;
    Tally tally;
    std::vector<std::thread> threads;
    for (int c = 0; c < connections; ++c) {
        threads.emplace_back([&] {
            HttpClient client(port);
            while (next.fetch_add(1) < total) {
                auto res = send(client);
                std::lock_guard lock(mu);
                if (res.status == 200) ++tally.allowed;
                else if (res.status == 429) {
                    ++tally.denied;
                    tally.denials.push_back(std::move(res));
                } else ++tally.other;
            }
        });
    }
    for (auto& t : threads) t.join();
    return tally;
}

}  // namespace ratelimitd::test
