// erl_key: envoyproxy/ratelimit's key as its pods write it, and one short key for entries no
// proxy's rule could name (a client-shaped descriptor of many entries or long values).
#include "ratelimitd/policy/erl_counter.hpp"
#include "ratelimitd/policy/rls_value.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace ratelimitd::policy;

constexpr std::int64_t now_s = 1764518400;  // 2025-11-30T16:00:00Z, a whole hour

TEST(ErlKey, WritesEntriesOutAsItsPodsDo) {
    const std::vector<RlsEntry> entries{{"remote_address", "10.0.0.1"}};
    EXPECT_EQ(erl_key("rl_", "edge", entries, RlsUnit::hour, now_s), "rl_edge_remote_address_10.0.0.1_1764518400");
    // The longest key and value kept as sent still share the pods' key.
    const std::vector<RlsEntry> longest{{std::string(1024, 'k'), std::string(max_kept_value_bytes, 'v')}};
    EXPECT_EQ(erl_key("", "d", longest, RlsUnit::hour, now_s),
              "d_" + std::string(1024, 'k') + "_" + std::string(max_kept_value_bytes, 'v') + "_1764518400");
}

TEST(ErlKey, ManyEntriesOrBoundedValuesMakeOneShortKeyEach) {
    std::vector<RlsEntry> many(40, RlsEntry{"tenant", bounded_value(std::string(5000, 'a'))});
    const std::string key = erl_key("", "edge", many, RlsUnit::hour, now_s);
    EXPECT_EQ(key.rfind("edge_%h", 0), 0u) << key;
    EXPECT_LT(key.size(), 100u);
    many.back().value = bounded_value(std::string(5000, 'b'));
    EXPECT_NE(erl_key("", "edge", many, RlsUnit::hour, now_s), key) << "another value, another key";
    const std::vector<RlsEntry> one_long{{"tenant", bounded_value(std::string(5000, 'a'))}, {"k", std::string(3000, 'x')}};
    EXPECT_EQ(erl_key("", "edge", one_long, RlsUnit::hour, now_s).rfind("edge_%h", 0), 0u);
}

}  // namespace
