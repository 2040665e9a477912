// lua/batch.lua's arguments: the numbers of each policy once per batch, then each check by
// reference to them.
#pragma once

#include "ratelimitd/store/redis/script_args.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ranges>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {

/// The checks of a batch sorted into groups of equal numbers (algorithm, limit, window_ms,
/// burst), in the order of each group's first check: lua/batch.lua receives each group's
/// numbers once, and each check the index of its group. Two policies with the same numbers
/// share a group: the script reads only the numbers.
/// Kept and reused by a sender: assign() keeps the vectors' capacity, so a batch like an
/// earlier one allocates nothing.
class PolicyGroups {
public:
    /// Groups `checks` (any random-access range of CheckArgs), forgetting the last ones.
    /// A scan of the groups found so far per check: a batch holds a few policies.
    template <std::ranges::random_access_range Checks>
    void assign(const Checks& checks) {
        firsts_.clear();
        group_of_.clear();
        const auto begin = std::ranges::begin(checks);
        const auto n = static_cast<std::size_t>(std::ranges::distance(checks));
        for (std::size_t i = 0; i < n; ++i) {
            const CheckArgs& c = begin[static_cast<std::ptrdiff_t>(i)];
            std::size_t g = 0;
            while (g < firsts_.size() && !same_numbers(begin[static_cast<std::ptrdiff_t>(firsts_[g])], c)) ++g;
            if (g == firsts_.size()) firsts_.push_back(static_cast<std::uint32_t>(i));
            group_of_.push_back(static_cast<std::uint32_t>(g));
        }
    }

    /// How many groups: the policies whose numbers are sent.
    [[nodiscard]] std::size_t size() const noexcept { return firsts_.size(); }
    /// The index of the first check of group `g` (0-based): whose numbers are sent for it.
    [[nodiscard]] std::size_t first_of(std::size_t g) const noexcept { return firsts_[g]; }
    /// The 1-based index of check `i`'s group, as lua/batch.lua reads it.
    [[nodiscard]] std::size_t group_of(std::size_t i) const noexcept { return group_of_[i] + 1; }

    /// True when `a` and `b` run the same algorithm on the same numbers.
    [[nodiscard]] static bool same_numbers(const CheckArgs& a, const CheckArgs& b) noexcept {
        return a.algorithm == b.algorithm && a.limit == b.limit && a.window_ms == b.window_ms && a.burst == b.burst;
    }

private:
    std::vector<std::uint32_t> firsts_;
    std::vector<std::uint32_t> group_of_;
};

/// How many bulk strings append_batch() writes for `checks` grouped as `groups`.
template <std::ranges::random_access_range Checks>
[[nodiscard]] std::size_t batch_arg_count(const Checks& checks, const PolicyGroups& groups) {
    std::size_t n = 0;
    std::size_t notifying = 0;
    for (const CheckArgs& c : checks) {
        ++n;
        if (!c.notify.empty()) ++notifying;
    }
    return 1 + n + 1 + groups.size() * args_per_policy + n * args_per_batch_check + 2 * notifying;
}

/// lua/batch.lua's numkeys, keys and ARGV for `checks` (grouped as `groups`, assigned from
/// the same checks): n, the n keys, the number of groups, each group's numbers, each check's
/// group, cost, member and mode, then a pair (1-based index, thresholds) per check with
/// CheckArgs::notify.
template <std::ranges::random_access_range Checks>
void append_batch(std::string& out, const Checks& checks, const PolicyGroups& groups) {
    append_bulk(out, static_cast<std::int64_t>(std::ranges::distance(checks)));
    for (const CheckArgs& c : checks) append_bulk(out, c.key);
    append_bulk(out, static_cast<std::int64_t>(groups.size()));
    const auto begin = std::ranges::begin(checks);
    for (std::size_t g = 0; g < groups.size(); ++g) {
        append_policy_numbers(out, begin[static_cast<std::ptrdiff_t>(groups.first_of(g))]);
    }
    std::size_t index = 0;
    for (const CheckArgs& c : checks) append_batch_check(out, groups.group_of(index++), c);
    index = 0;
    for (const CheckArgs& c : checks) {
        ++index;
        if (!c.notify.empty()) append_notify_pair(out, index, c.notify);
    }
}

/// lua/batch.lua's arguments for checks it holds: owned (a vector, a single view) or a view of
/// the callers' own. Grouped once, when made.
template <std::ranges::random_access_range Checks>
class BatchChecks final : public ScriptArgs {
public:
    explicit BatchChecks(Checks checks) : checks_(std::move(checks)) { groups_.assign(checks_); }

    [[nodiscard]] std::size_t count() const override { return batch_arg_count(checks_, groups_); }
    void append_to(std::string& out) const override { append_batch(out, checks_, groups_); }
    [[nodiscard]] bool flat_reply() const override { return true; }

private:
    Checks checks_;
    PolicyGroups groups_;
};

}  // namespace ratelimitd::store::redis
