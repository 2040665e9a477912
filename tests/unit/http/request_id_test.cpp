// Generated request ids: the format callers and logs see, and no repeats within or across
// threads.
#include "ratelimitd/http/request_id.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

namespace ratelimitd::http {
namespace {

TEST(RequestId, IsSixteenLowerCaseHexDigits) {
    for (int i = 0; i < 100; ++i) {
        const std::string id = new_request_id();
        ASSERT_EQ(id.size(), 16u);
        EXPECT_TRUE(std::all_of(id.begin(), id.end(), [](char c) {
            return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        })) << id;
    }
}

TEST(RequestId, NoIdRepeatsWithinOrAcrossThreads) {
    constexpr int threads = 4;
    constexpr int per_thread = 50'000;
    std::vector<std::vector<std::string>> ids(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&ids, t] {
            for (int i = 0; i < per_thread; ++i) ids[static_cast<std::size_t>(t)].push_back(new_request_id());
        });
    }
    for (auto& w : workers) w.join();
    std::unordered_set<std::string> seen;
    for (const auto& list : ids) seen.insert(list.begin(), list.end());
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(threads * per_thread));
}

}  // namespace
}  // namespace ratelimitd::http
