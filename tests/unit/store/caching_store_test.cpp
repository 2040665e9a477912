// CachingStore: the inner store takes the check's key string, and a denial it answers is still
// remembered under that key (the caching store keeps its own copy in its frame), for a key
// that fits the inline copy and one longer than it, through apply, apply_declined and
// apply_declined_into (its verdict written into the caller's) alike;
// answers at once written into the caller's verdict (try_apply_now_into).
#include "ratelimitd/store/denial_cache.hpp"
#include "ratelimitd/store/memory/memory_store.hpp"

#include "support/manual_clock.hpp"
#include "support/run_on_io.hpp"
#include "unit/store/memory_policies.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ratelimitd::store {
namespace {

using ratelimitd::test::make_policy;
using ratelimitd::test::run_on_io;
using ratelimitd::testing::ManualClock;

enum class Path { apply, apply_declined, apply_declined_into };

/// One check through `path`: apply_declined_into's verdict is read from where it was written.
result<check::Verdict> ask_through(CachingStore& caching, Path path, const policy::Policy& p, const std::string& key) {
    if (path == Path::apply) return run_on_io(caching.apply(p, key, 1));
    if (path == Path::apply_declined) return run_on_io(caching.apply_declined(p, key, 1));
    check::Verdict written;
    const auto done = run_on_io(caching.apply_declined_into(p, key, 1, written));
    if (!done) return done.error();
    return written;
}

/// Checks `key` twice against a limit of one through `path` (the second is denied), then asks
/// the cache at once: true when that answer came from the denial cache.
bool second_denial_is_cached(const std::string& key, Path path) {
    ManualClock clock;
    memory::MemoryStore inner{clock};
    DenialCache cache;
    CachingStore caching(inner, cache);
    const policy::Policy p = make_policy(policy::Algorithm::fixed_window, 1, 60'000);
    auto ask = [&] { return ask_through(caching, path, p, key); };
    const auto first = ask();
    EXPECT_TRUE(first && first->allowed);
    const auto second = ask();
    EXPECT_TRUE(second && !second->allowed && !second->from_denial_cache) << "the store's own denial";
    const auto cached = caching.try_apply_now(p, key, 1, DenialCache::clock::now());
    const bool hit = cached.has_value() && *cached && (*cached)->from_denial_cache && !(*cached)->allowed;
    EXPECT_EQ(cache.hits(), hit ? 1u : 0u);
    return hit;
}

TEST(CachingStore, ADenialIsRememberedUnderTheKeyTheInnerStoreTook) {
    const std::string short_key = "rl:p:tenant-a";
    const std::string long_key(300, 'k');  // past the 128 bytes kept inline
    EXPECT_TRUE(second_denial_is_cached(short_key, Path::apply));
    EXPECT_TRUE(second_denial_is_cached(long_key, Path::apply));
    EXPECT_TRUE(second_denial_is_cached(short_key, Path::apply_declined));
    EXPECT_TRUE(second_denial_is_cached(long_key, Path::apply_declined));
    EXPECT_TRUE(second_denial_is_cached(short_key, Path::apply_declined_into));
    EXPECT_TRUE(second_denial_is_cached(long_key, Path::apply_declined_into));
}

// try_apply_now_into writes an answer at once into the caller's verdict: the embedded store's
// own decision, and (through Store's default) a caching store's remembered denial; a call the
// store declines (a key with no denial remembered) leaves the verdict as it was.
TEST(CachingStore, AnAnswerAtOnceIsWrittenIntoTheCallersVerdict) {
    ManualClock clock;
    memory::MemoryStore inner{clock};
    DenialCache cache;
    CachingStore caching(inner, cache);
    const policy::Policy p = make_policy(policy::Algorithm::fixed_window, 1, 60'000);
    const auto now = DenialCache::clock::now();
    check::Verdict v;
    const auto first = inner.try_apply_now_into(p, "rl:p:a", 1, now, v);
    ASSERT_TRUE(first.has_value() && *first);
    ASSERT_EQ(v.windows.size(), 1u);
    EXPECT_TRUE(v.allowed);
    EXPECT_EQ(v.windows.front().remaining, 0);

    const auto declined = caching.try_apply_now_into(p, "rl:p:a", 1, now, v);
    EXPECT_FALSE(declined.has_value());
    EXPECT_TRUE(v.allowed);  // untouched

    const auto second = run_on_io(caching.apply(p, "rl:p:a", 1));  // denied, and remembered
    ASSERT_TRUE(second && !second->allowed);
    const auto cached = caching.try_apply_now_into(p, "rl:p:a", 1, now, v);
    ASSERT_TRUE(cached.has_value() && *cached);
    ASSERT_EQ(v.windows.size(), 1u);
    EXPECT_FALSE(v.allowed);
    EXPECT_TRUE(v.from_denial_cache);
}

}  // namespace
}  // namespace ratelimitd::store
