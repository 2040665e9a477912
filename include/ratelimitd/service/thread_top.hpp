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

/// The shape of every thread's heavy hitters (the top_k and top_window settings).
struct TopOptions {
    std::size_t k = 20;                       ///< tenants kept per sketch; 0: heavy hitters off
    std::chrono::milliseconds window{300'000};
    std::size_t slices = 5;                   ///< the window is this many slices
    [[nodiscard]] std::chrono::milliseconds slice() const { return window / static_cast<std::int64_t>(slices); }
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
/// Memory, per thread: per policy seen, slices x 2 sketches x K entries (an entry: the
/// tenant, up to 128 bytes, its string, two counts and a hash: under 200 bytes).
/// @par Thread Safety
/// Used only on its server thread (the board reads it there, see TopBoard::gather).
class ThreadTop {
public:
    using clock = std::chrono::steady_clock;

    ThreadTop(const TopOptions& options, TopBoard& board) : options_(options), board_(board) {}

    /// Adds `amount` to `tenant` under `policy` in the slice of `now`.
    void record(std::string_view policy, std::string_view tenant, TopBy by, std::uint64_t amount,
                clock::time_point now);

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
    void copy_live(const Ring& ring, TopBy by, std::int64_t current, PolicySketches& into) const;

    TopOptions options_;
    TopBoard& board_;
    std::unordered_map<std::string, Ring, NameHash, std::equal_to<>> policies_;
};

}  // namespace ratelimitd::service
