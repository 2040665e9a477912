// lua/concurrency.lua on a real redis-server, at an instant behind Redis's own clock (a batch
// script's TIME read before this check, or a script that ran long on a loaded machine): the
// key's TTL must still cover every live lease. It was set with PEXPIREAT at the last lease's
// expiry, which Redis 7.0 takes as "delete now" once its clock has passed that instant: the
// leases were lost and the script failed on the reset it could no longer find.
#include "ratelimitd/core/clock.hpp"
#include "ratelimitd/store/redis/lua_sources.hpp"
#include "support/processes.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace ratelimitd::test::concurrency_script_test {
namespace {

std::string concurrency_script() {
    for (const auto& s : store::redis::lua_sources()) {
        if (s.name == "concurrency") return std::string(s.text);
    }
    throw std::runtime_error("no script concurrency");
}

TEST(ConcurrencyScript, ALeaseTakenAtAnInstantBehindRedisClockKeepsItsSlot) {
    RedisServer redis;
    const std::string script = concurrency_script();
    // One slot, leases of 500 ms, taken at an instant 1 s behind the real clock: the lease's
    // expiry (that instant + 500 ms) is already behind Redis's clock.
    const std::string at = std::to_string(SystemClock{}.now_ms() - 1000);
    const auto take = [&](const std::string& lease) {
        return redis.command({"EVAL", script, "1", "slots", "1", "500", "1", "1", lease, "", at});
    };
    const std::string first = take("lease-a");
    ASSERT_EQ(first.substr(0, 2), "1 ") << first;
    EXPECT_EQ(redis.command({"EXISTS", "slots"}), "1") << "the lease's key was deleted as it was written";
    const std::string second = take("lease-b");
    EXPECT_EQ(second.substr(0, 2), "0 ") << "at the same instant the one slot is held: " << second;
}

}  // namespace
}  // namespace ratelimitd::test::concurrency_script_test
