// The one place that spells the argument layout of the scripts in lua/: numkeys, the keys,
// then each check's arguments (lua/batch.lua's policies-once grouping: batch_args.hpp).
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/store/redis/resp_command.hpp"
#include "ratelimitd/store/state_layout.hpp"
#include "ratelimitd/store/store.hpp"

#include <cstddef>
#include <cstdint>
#include <random>
#include <ranges>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {

/// Arguments of one check in lua/batch.lua and lua/multi.lua: the algorithm's name, then the
/// algorithm script's own ARGV[1..5] (limit, window_ms, burst, cost, member), then the mode
/// ('', "report:<max_debt>", "ask" or "charge": the script's ARGV[6]; multi.lua reads ask and
/// charge, policy::Part). The build (cmake/embed_lua.cmake) reads this line
/// and writes the number into both scripts.
inline constexpr std::size_t args_per_check = 7;

/// lua/batch.lua's layout (batch_args.hpp): the numbers of each policy once per batch, its
/// algorithm's name then limit, window_ms and burst; then per check its policy's 1-based index,
/// then cost, member and mode. Its flat reply (flat_reply.hpp) has reply_per_check values per
/// check: allowed, remaining, reset_after_ms. The build reads these three lines and writes them
/// into the script.
inline constexpr std::size_t args_per_policy = 4;
inline constexpr std::size_t args_per_batch_check = 4;
inline constexpr std::size_t reply_per_check = 3;

/// One check as the scripts read it.
struct CheckArgs {
    policy::Algorithm algorithm = policy::Algorithm::token_bucket;
    std::int64_t limit = 0;
    std::int64_t window_ms = 0;
    std::int64_t burst = 0;
    std::uint32_t cost = 1;
    std::string key;
    /// sliding log: a fresh member; concurrency: the new lease id; fixed window with a
    /// calendar: "cal:<unit>:<offset min>" (calendar_arg); empty for the others
    std::string member;
    bool report = false;           ///< charge without asking (POST /v1/report)
    std::int64_t report_cost = 0;  ///< a report's signed units, written instead of cost
    std::int64_t max_debt = 0;     ///< a report's bound on debt (Policy::debt_bound), in its mode
    policy::Part part = policy::Part::decide;  ///< how multi.lua weighs it (not a report)
    /// Quota webhooks: the policy's thresholds as lua/notify/crossings.lua reads them
    /// (policy::threshold_spec), or a report's with its debt bound (policy::report_spec); empty when it
    /// has none, and then nothing is sent for them.
    std::string notify{};
};

/// ARGV[5] of fixed_window.lua for a calendar-aligned policy: "cal:1mo:120"; "" otherwise.
std::string calendar_arg(const policy::Policy& p);

/// Hands out sliding-log members unique across sidecars: "<instance id>:<sequence>".
class MemberSource {
public:
    explicit MemberSource(std::string instance_id, StateLayout layout = StateLayout::string)
        : instance_id_(std::move(instance_id)), layout_(layout) {}
    /// A fresh member for a sliding-log policy, a fresh lease id (new_lease_id) for a
    /// concurrency policy; the key's TTL in seconds, jitter included, for erl_fixed_window;
    /// "hash" for a token bucket written in the hash layout (StateLayout::hash); "" for the
    /// other algorithms (they ignore it).
    std::string next(const policy::Policy& p);

private:
    /// erl_fixed_window: the unit's seconds plus a jitter in [0, expiration_jitter).
    std::int64_t expiry_seconds(const policy::Policy& p);

    std::string instance_id_;
    StateLayout layout_;
    std::uint64_t sequence_ = 0;
    std::minstd_rand jitter_{std::random_device{}()};
};

/// The check of policy `p` on `key` (a fresh member from `members` for a sliding log).
CheckArgs check_args(const policy::Policy& p, std::string key, std::uint32_t cost, MemberSource& members);

/// The report of `report_cost` signed units of policy `p` on `key` (a report mode check).
CheckArgs report_args(const policy::Policy& p, std::string key, std::int64_t report_cost, MemberSource& members);

/// The arguments of one check of Store::apply_all: a report, or a check taking its part.
CheckArgs limit_args(const LimitCheck& c, MemberSource& members);

/// A script call's arguments (numkeys, the keys, then the script's ARGV), written as RESP bulk
/// strings straight from the checks' fields into the command's bytes: no argument vector, no
/// std::string per number (std::to_chars). NodeClient::eval writes them after EVALSHA and the
/// digest, and again after EVAL and the script's text when Redis answers NOSCRIPT, so nothing
/// is kept encoded for that retry.
class ScriptArgs {
public:
    virtual ~ScriptArgs() = default;
    /// How many bulk strings append_to() writes (the command's array counts them).
    [[nodiscard]] virtual std::size_t count() const = 0;
    virtual void append_to(std::string& out) const = 0;
    /// True when the script answers lua/batch.lua's flat array of integers: the connection
    /// then reads it into Value::integers (ValueReader::expect_integers), no Value per member.
    [[nodiscard]] virtual bool flat_reply() const { return false; }

protected:
    ScriptArgs() = default;
    ScriptArgs(const ScriptArgs&) = default;
    ScriptArgs& operator=(const ScriptArgs&) = default;
};

/// What the algorithm's own script is asked, after its five arguments.
enum class SingleMode {
    check,    ///< decide and charge: nothing more
    peek,     ///< decide without charging: "peek"
    release,  ///< lua/concurrency.lua frees the lease in `member`: "release"
};

/// The algorithm's own script: 1, key, limit, window_ms, burst, cost, member[, "peek" |
/// "release"].
class SingleCheck final : public ScriptArgs {
public:
    explicit SingleCheck(CheckArgs check, SingleMode mode = SingleMode::check)
        : check_(std::move(check)), mode_(mode) {}
    [[nodiscard]] std::size_t count() const override;
    void append_to(std::string& out) const override;
    [[nodiscard]] const CheckArgs& check() const noexcept { return check_; }

private:
    CheckArgs check_;
    SingleMode mode_;
};

/// SingleCheck's count and arguments for a check that lives elsewhere (the coalesced queue).
[[nodiscard]] std::size_t single_check_count(SingleMode mode) noexcept;
void append_single_check(std::string& out, const CheckArgs& check, SingleMode mode);

/// lua/concurrency.lua freeing `lease` of policy `p` on `key`:
/// 1, key, limit, lease_ms, burst, 0, lease, "release".
SingleCheck release_call(const policy::Policy& p, std::string key, std::string lease);

/// One check's args_per_check values in lua/multi.lua: the algorithm's name,
/// its five arguments, the mode.
void append_grouped_check(std::string& out, const CheckArgs& check);
/// A policy's numbers in lua/batch.lua, once per batch: the algorithm's name, limit, window_ms,
/// burst (args_per_policy values).
void append_policy_numbers(std::string& out, const CheckArgs& check);
/// A check in lua/batch.lua (args_per_batch_check values): the 1-based index of its policy's
/// numbers, then cost, member and mode.
void append_batch_check(std::string& out, std::size_t policy, const CheckArgs& check);
/// The pair (1-based `index`, thresholds) of a check with CheckArgs::notify.
void append_notify_pair(std::string& out, std::size_t index, const std::string& notify);

/// lua/multi.lua (and lua/refund.lua): n, the n keys, then args_per_check values per check, in
/// order, then a pair (1-based index, thresholds) per check with CheckArgs::notify. `Checks` is
/// any range of CheckArgs: owned (a vector) or a view of the callers' own, so they are never
/// gathered into a vector of their own. (lua/batch.lua takes BatchChecks, batch_args.hpp.)
template <std::ranges::forward_range Checks>
class GroupedChecks final : public ScriptArgs {
public:
    explicit GroupedChecks(Checks checks) : checks_(std::move(checks)) {}

    [[nodiscard]] std::size_t count() const override {
        std::size_t n = 0;
        std::size_t notifying = 0;
        for (const CheckArgs& c : checks_) {
            ++n;
            if (!c.notify.empty()) ++notifying;
        }
        return 1 + n * (1 + args_per_check) + 2 * notifying;
    }

    void append_to(std::string& out) const override {
        append_bulk(out, static_cast<std::int64_t>(std::ranges::distance(checks_)));
        for (const CheckArgs& c : checks_) append_bulk(out, c.key);
        for (const CheckArgs& c : checks_) append_grouped_check(out, c);
        std::size_t index = 0;
        for (const CheckArgs& c : checks_) {
            ++index;
            if (!c.notify.empty()) append_notify_pair(out, index, c.notify);
        }
    }

private:
    Checks checks_;
};

}  // namespace ratelimitd::store::redis
