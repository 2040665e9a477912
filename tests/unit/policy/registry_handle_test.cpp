// RegistryHandle: each thread's snapshot follows every reload at once, and a snapshot in use
// outlives the reload that superseded it.
#include "ratelimitd/policy/registry_handle.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::policy {
namespace {

std::shared_ptr<const Registry> registry_named(const std::string& prefix) {
    auto r = std::make_shared<Registry>();
    r->prefix = prefix;
    return r;
}

/// A registry that sets `freed` when it is destroyed.
std::shared_ptr<const Registry> watched_registry(const std::string& prefix, std::atomic<bool>& freed) {
    auto* r = new Registry();
    r->prefix = prefix;
    return std::shared_ptr<const Registry>(r, [&freed](const Registry* p) {
        delete p;
        freed = true;
    });
}

TEST(RegistryHandle, TheNextCallOnEveryThreadSeesAReload) {
    RegistryHandle handle(registry_named("v1"));
    EXPECT_EQ(handle.current()->prefix, "v1");
    std::string other_before;
    std::thread([&] { other_before = handle.current()->prefix; }).join();
    EXPECT_EQ(other_before, "v1");

    handle.replace(registry_named("v2"));
    EXPECT_EQ(handle.current()->prefix, "v2");
    // A thread whose copy was taken before the reload renews it on its next call.
    std::string other_after;
    std::thread([&] { other_after = handle.current()->prefix; }).join();
    EXPECT_EQ(other_after, "v2");
}

TEST(RegistryHandle, ASnapshotInUseOutlivesTheReload) {
    std::atomic<bool> freed{false};
    RegistryHandle handle(watched_registry("old", freed));
    auto in_flight = handle.current();
    handle.replace(registry_named("new"));
    EXPECT_EQ(handle.current()->prefix, "new");  // this thread's copy is renewed
    EXPECT_FALSE(freed);                          // but the check in flight still holds the old one
    EXPECT_EQ(in_flight->prefix, "old");
    in_flight.reset();
    EXPECT_TRUE(freed);  // nothing holds it any more: not this thread's copy, not the handle
}

TEST(RegistryHandle, HandlesOnOneThreadKeepTheirOwnRegistries) {
    RegistryHandle a(registry_named("a"));
    RegistryHandle b(registry_named("b"));
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(a.current()->prefix, "a");
        EXPECT_EQ(b.current()->prefix, "b");
    }
    b.replace(registry_named("b2"));
    EXPECT_EQ(a.current()->prefix, "a");
    EXPECT_EQ(b.current()->prefix, "b2");
}

TEST(RegistryHandle, ReadersRacingReloadsNeverGoBackAndEndOnTheLast) {
    constexpr int reloads = 2000;
    constexpr int readers = 3;
    RegistryHandle handle(registry_named("0"));
    std::atomic<bool> done{false};
    std::atomic<int> went_back{0};
    std::vector<std::thread> threads;
    std::vector<std::string> last(readers);
    for (int t = 0; t < readers; ++t) {
        threads.emplace_back([&, t] {
            int seen = 0;
            while (!done.load()) {
                const auto snapshot = handle.current();
                const int n = std::stoi(snapshot->prefix);
                if (n < seen) went_back.fetch_add(1);
                seen = n;
            }
            last[static_cast<std::size_t>(t)] = handle.current()->prefix;  // after the last reload
        });
    }
    for (int i = 1; i <= reloads; ++i) handle.replace(registry_named(std::to_string(i)));
    done = true;
    for (auto& t : threads) t.join();
    EXPECT_EQ(went_back.load(), 0);
    for (const auto& prefix : last) EXPECT_EQ(prefix, std::to_string(reloads));
}

}  // namespace
}  // namespace ratelimitd::policy
