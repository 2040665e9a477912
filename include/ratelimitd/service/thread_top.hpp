// One server thread's heavy hitters: per policy, a ring of time slices of two top-K sketches.
#pragma once

#include "ratelimitd/service/space_saving.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ratelimitd::service {

class TopBoard;

/// What the heavy hitters rank tenants by.
enum class TopBy { denied, admitted };

/// The shape of every thread's heavy hitters (the top_k and top_window settings; the sampling
/// numbers are constants, fields so that tests can choose them).
struct TopOptions {
    std::size_t k = 20;                       ///< tenants kept per sketch; 0: heavy hitters off
    std::chrono::milliseconds window{300'000};
    std::size_t slices = 5;                   ///< the window is this many slices
    /// A thread counts every check of a slice while it has counted fewer than this many per
    /// second of the slice (all policies together); past that it samples.
    std::uint64_t exact_per_second = 200;
    /// Past the exact share, a check is counted with probability 1 / sample_one_in, and then
    /// counted sample_one_in times. 1: never sample.
    std::uint32_t sample_one_in = 16;
    [[nodiscard]] std::chrono::milliseconds slice() const { return window / static_cast<std::int64_t>(slices); }
    /// How many checks a thread counts exactly in one slice (at least one).
    [[nodiscard]] std::uint64_t exact_per_slice() const;
};

/// One policy's sketches in one thread's live slices, copied for the merge.
struct PolicySketches {
    std::string policy;
    std::vector<SpaceSaving> sketches;
};

/// Per policy, `slices` slices of `slice()` each, each holding a sketch of denied checks and
/// one of admitted units. A slice is cleared when its turn in the ring comes again, so what
/// is older than the window is forgotten without a sweep.
///
/// Sampled above a rate: in each slice of time the thread counts its first
/// exact_per_slice() checks exactly; after those, each check is counted with probability
/// 1 / sample_one_in, sample_one_in times (an unbiased estimate), and the others cost a
/// comparison and a random number: no lookup of the policy, no sketch. So a light load stays
/// exact and a heavy one pays for one check in sample_one_in.
///
/// Memory, per thread: per policy seen, slices x 2 sketches x K entries (an entry: the
/// tenant, up to 128 bytes, its string, two counts and a hash: under 200 bytes).
/// @par Thread Safety
/// Used only on its server thread (the board reads it there, see TopBoard::gather).
class ThreadTop {
public:
    using clock = std::chrono::steady_clock;

    ThreadTop(const TopOptions& options, TopBoard& board)
        : options_(options), board_(board), exact_per_slice_(options.exact_per_slice()) {}
    // Not copied or moved: last_ points into policies_.
    ThreadTop(const ThreadTop&) = delete;
    ThreadTop& operator=(const ThreadTop&) = delete;

    /// Adds `amount` to `tenant` under `policy` in the slice of `now` (past the slice's exact
    /// share: sample_one_in x `amount`, for one call in sample_one_in).
    void record(std::string_view policy, std::string_view tenant, TopBy by, std::uint64_t amount,
                clock::time_point now);

    /// As record() at the clock's now, read only for a check that is counted: past the
    /// slice's exact share that is one call in sample_one_in. A kept check that finds the
    /// next slice begun starts its exact share there, weighted as a sampled one (it stands
    /// for the checks skipped since the slice turned).
    void record(std::string_view policy, std::string_view tenant, TopBy by, std::uint64_t amount);

    /// The live slices' sketches of `by`, for `policy` or (nullopt) every policy.
    [[nodiscard]] std::vector<PolicySketches> snapshot(const std::optional<std::string>& policy, TopBy by,
                                                       clock::time_point now) const;

    [[nodiscard]] TopBoard& board() const noexcept { return board_; }

private:
    struct Slice {
        std::int64_t index = -1;  ///< which slice of time it holds; -1: never used
        SpaceSaving denied;
        SpaceSaving admitted;
    };
    using Ring = std::vector<Slice>;
    struct NameHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };

    [[nodiscard]] std::int64_t slice_index(clock::time_point now) const;
    /// Moves the thread's count of checks to the slice of `now`.
    void enter_slice(clock::time_point now);
    /// Whether a check past the exact share is counted (probability 1 / sample_one_in).
    [[nodiscard]] bool sampled() noexcept;
    /// Adds `amount` to `tenant` in the current slice of `policy`'s ring.
    void add(std::string_view policy, std::string_view tenant, TopBy by, std::uint64_t amount);
    void copy_live(const Ring& ring, TopBy by, std::int64_t current, PolicySketches& into) const;

    TopOptions options_;
    TopBoard& board_;
    std::uint64_t exact_per_slice_;
    std::unordered_map<std::string, Ring, NameHash, std::equal_to<>> policies_;
    // The entry of policies_ add() used last (a thread checks one or a few policies, often the
    // same again): found by comparing its name, not hashing it. policies_ is never erased
    // from and its nodes do not move, so the pointer stays good.
    std::pair<const std::string, Ring>* last_ = nullptr;
    // The slice of time the thread is counting in, and how many checks it has seen there.
    std::int64_t slice_ = -1;
    clock::time_point slice_begin_ = clock::time_point::max();
    clock::time_point slice_end_ = clock::time_point::min();
    std::uint64_t seen_in_slice_ = 0;
    std::uint64_t random_ = 0x9e3779b97f4a7c15;  // xorshift64 state: any value but 0
};

}  // namespace ratelimitd::service
