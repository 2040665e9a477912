// Every policy::Algorithm is described once (policy::algorithm_table) and handled everywhere a
// check can go: its own script, the batch, layered and refund scripts (whose dispatch tables the
// build generates), its cluster refund when the table promises one, and the embedded store.
#include "ratelimitd/store/memory/memory_store.hpp"
#include "ratelimitd/store/redis/lua_sources.hpp"
#include "ratelimitd/store/redis/script_args.hpp"
#include "ratelimitd/store/redis/scripts.hpp"

#include "support/manual_clock.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::store {
namespace {

using policy::Algorithm;

policy::Policy policy_of(Algorithm a) {
    policy::Policy p;
    p.name = policy::to_string(a);
    p.algorithm = a;
    p.limit = 3;
    p.window = std::chrono::milliseconds(60'000);
    p.burst = 3;
    return p;
}

bool contains(std::string_view text, const std::string& part) { return text.find(part) != std::string_view::npos; }

TEST(AlgorithmRegistry, TheBuildReadEveryAlgorithmInOrder) {
    const auto& names = redis::algorithm_names();
    const auto all = redis::all_algorithms();
    ASSERT_EQ(all.size(), names.size());
    ASSERT_GE(all.size(), 5u);
    for (std::size_t i = 0; i < all.size(); ++i) {
        EXPECT_EQ(policy::to_string(all[i]), names[i]) << "enumerator " << i << " has no row in policy::algorithm_table";
    }
}

TEST(AlgorithmRegistry, TheTableHasOneRowPerEnumeratorInOrder) {
    // names: the enumerators as the build read them from algorithm.hpp.
    const auto& names = redis::algorithm_names();
    ASSERT_EQ(policy::algorithm_count, names.size()) << "a policy::Algorithm without its row in algorithm_table";
    for (std::size_t i = 0; i < names.size(); ++i) {
        const policy::AlgorithmTraits& row = policy::algorithm_table[i];
        EXPECT_EQ(row.name, names[i]) << "row " << i;
        EXPECT_EQ(row.algorithm, static_cast<Algorithm>(i)) << row.name;
        EXPECT_EQ(&policy::traits(row.algorithm), &row) << row.name;
        if (row.configurable) {
            EXPECT_EQ(policy::algorithm_named(row.name), row.algorithm) << row.name;
        } else {
            EXPECT_EQ(policy::algorithm_named(row.name), std::nullopt) << row.name << ": no config may name it";
        }
        EXPECT_FALSE(std::string_view(row.prose).empty()) << row.name;
    }
}

TEST(AlgorithmRegistry, EveryClusterRefundTheTablePromisesIsInItsScript) {
    const std::string_view refund = redis::refund_script().text;
    EXPECT_FALSE(contains(refund, "\n--@")) << "a build directive was left unexpanded in lua/refund.lua";
    std::vector<std::string_view> promised;
    for (const auto& row : policy::algorithm_table) {
        const std::string name = row.name;
        // lua/refund.lua runs the algorithm's "refund" mode, then its peek: every one is pasted in.
        EXPECT_TRUE(contains(refund, "local " + name + " = function(KEYS, ARGV)\n")) << name;
        const bool listed = contains(refund, "\n  " + name + " = true,\n");
        const bool has_mode = contains(redis::script_for(row.algorithm).text, "\nif mode == 'refund' then\n");
        if (row.cluster_refund == policy::ClusterRefund::none) {
            EXPECT_FALSE(listed) << name << ": lua/refund.lua refunds what the table says it cannot";
            EXPECT_FALSE(has_mode) << name;
        } else {
            EXPECT_TRUE(listed) << name << ": the table promises a cluster refund, lua/refund.lua lists none";
            EXPECT_TRUE(has_mode) << name << ": the table promises a cluster refund, lua/" << name
                                  << ".lua has no refund mode";
            promised.push_back(row.name);
        }
    }
    // What the build checked the scripts against.
    EXPECT_EQ(promised, redis::cluster_refund_names());
}

TEST(AlgorithmRegistry, TheTableIsConsistent) {
    for (const auto& row : policy::algorithm_table) {
        // A refund is a negative report; a lease is one slot, never reported after the fact.
        EXPECT_TRUE(!row.refunds || row.reports) << row.name;
        if (row.leases) {
            EXPECT_FALSE(row.reports) << row.name;
            EXPECT_EQ(row.member, policy::ScriptMember::lease) << row.name;
            EXPECT_FALSE(row.cacheable_denials) << row.name << ": a release frees a slot before the reset";
        }
        EXPECT_TRUE(row.member != policy::ScriptMember::lease || row.leases) << row.name;
    }
}

TEST(AlgorithmRegistry, AMaxCostFollowsTheTable) {
    for (Algorithm a : policy::all_algorithms()) {
        policy::Policy p = policy_of(a);
        p.limit = 5;
        p.burst = p.has_burst() ? 9 : 5;
        const std::int64_t want = policy::traits(a).leases ? 1 : policy::traits(a).burst ? 9 : 5;
        EXPECT_EQ(p.max_cost(), want) << p.name;
        EXPECT_EQ(p.has_burst(), policy::traits(a).burst) << p.name;
    }
}

TEST(AlgorithmRegistry, EveryAlgorithmHasItsOwnScript) {
    for (Algorithm a : redis::all_algorithms()) {
        const redis::Script& s = redis::script_for(a);
        EXPECT_EQ(s.name, policy::to_string(a));
        EXPECT_FALSE(s.text.empty());
        EXPECT_EQ(s.sha1.size(), 40u);
    }
}

TEST(AlgorithmRegistry, TheBatchAndLayeredScriptsDispatchOnEveryAlgorithm) {
    for (const redis::Script* s : {&redis::batch_script(), &redis::multi_script()}) {
        for (Algorithm a : redis::all_algorithms()) {
            const std::string name = policy::to_string(a);
            EXPECT_TRUE(contains(s->text, "local " + name + " = function(KEYS, ARGV)\n")) << s->name << ": " << name;
            EXPECT_TRUE(contains(s->text, "\n  " + name + " = " + name + ",\n")) << s->name << ": " << name;
        }
    }
}

TEST(AlgorithmRegistry, TheBatchAndLayeredScriptsReadTheEncodersStride) {
    const std::string stride = "local args_per_check = " + std::to_string(redis::args_per_check) + "\n";
    const std::string per_policy = "local args_per_policy = " + std::to_string(redis::args_per_policy) + "\n";
    const std::string per_check = "local args_per_batch_check = " + std::to_string(redis::args_per_batch_check) + "\n";
    EXPECT_TRUE(contains(redis::multi_script().text, stride));
    EXPECT_TRUE(contains(redis::batch_script().text, per_policy));
    EXPECT_TRUE(contains(redis::batch_script().text, per_check));
    for (const redis::Script* s : {&redis::batch_script(), &redis::multi_script()}) {
        EXPECT_FALSE(contains(s->text, "\n--@")) << s->name << ": a build directive was left unexpanded";
        EXPECT_FALSE(contains(s->text, "6 *")) << s->name << ": the stride is spelled by hand";
        EXPECT_FALSE(contains(s->text, "4 *")) << s->name << ": the stride is spelled by hand";
    }
}

TEST(AlgorithmRegistry, TheEmbeddedStoreDecidesEveryAlgorithm) {
    ratelimitd::testing::ManualClock clock;
    memory::MemoryStore store(clock);
    for (Algorithm a : redis::all_algorithms()) {
        const policy::Policy p = policy_of(a);
        const std::string key = "k:" + p.name;
        for (int i = 0; i < 3; ++i) EXPECT_TRUE(store.decide(p, key, 1).allowed) << p.name << " check " << i;
        EXPECT_FALSE(store.decide(p, key, 1).allowed) << p.name << ": the fourth of three";
        EXPECT_EQ(store.inspect(p, key).windows.front().remaining, 0) << p.name;

        const std::vector<LimitCheck> layered{{&p, "layered:a:" + p.name, 1}, {&p, "layered:b:" + p.name, 3}};
        const check::Verdict both = store.decide_all(layered);
        EXPECT_TRUE(both.allowed) << p.name;
        EXPECT_EQ(both.windows.size(), 2u) << p.name;
    }
}

}  // namespace
}  // namespace ratelimitd::store
