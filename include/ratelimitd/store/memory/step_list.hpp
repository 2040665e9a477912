// StepList: what the embedded store derives from its list of algorithm steps (the state
// variant, the check and report tables), so an algorithm is added there in one line.
// Internal to src/store/memory.
#pragma once

#include "ratelimitd/store/memory/step.hpp"

#include <cstddef>
#include <variant>

namespace ratelimitd::store::memory::detail {

/// Each Step: `static constexpr Algorithm algorithm`, `using State` (what its script keeps in
/// Redis), `static Reply check(...)` and `static Reply report(...)` (AlgorithmStep).
template <typename... Step>
struct StepList {
    /// Alternative i is the state of the i-th step.
    using State = std::variant<typename Step::State...>;
    static constexpr std::size_t size = sizeof...(Step);
    static constexpr AlgorithmStep checks[] = {&Step::check...};
    static constexpr AlgorithmStep reports[] = {&Step::report...};

    /// Whether step i is the step of algorithm i, for every i (the tables are indexed by it).
    static constexpr bool in_enum_order() {
        std::size_t i = 0;
        return ((Step::algorithm == static_cast<Algorithm>(i++)) && ...);
    }
};

}  // namespace ratelimitd::store::memory::detail
