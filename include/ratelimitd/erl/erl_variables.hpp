// ERL mode's one table: every environment variable of envoyproxy/ratelimit's
// settings (src/settings/settings.go) and what ratelimitd does with it. The
// mapper (erl_environment.hpp) reads variables only through these rows,
// docs/envoy.md shows them, and a unit test holds the rows equal to the
// variable list of settings.go (tests/data/erl_settings.txt) and to the doc.
#pragma once

#include <span>
#include <string_view>

namespace ratelimitd::erl {

/// How envoyproxy/ratelimit reads the variable's text (a bad text refuses the
/// start, as envoyproxy/ratelimit's envconfig does, naming the variable).
enum class ErlType {
    text,      ///< any text
    integer,   ///< a whole number (Go's strconv.ParseInt)
    boolean,   ///< 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False (Go's
               ///< strconv.ParseBool)
    duration,  ///< a Go duration: "300ms", "10s", "1h30m"
    number,    ///< a decimal number
    list,      ///< a comma-separated list
    map,       ///< comma-separated key:value pairs
};

/// What ratelimitd does with the variable.
enum class ErlUse {
    mapped,     ///< feeds a ratelimitd setting (values it cannot honour are refused
                ///< by name)
    no_effect,  ///< accepted; changes no decision here (the row's `ours` says why)
    refused,    ///< accepted at its default only; any value that would change
                ///< behaviour is refused
};

struct ErlVariable {
    std::string_view name;
    ErlType type = ErlType::text;
    std::string_view erl_default;  ///< envoyproxy/ratelimit's default ("" when none)
    ErlUse use = ErlUse::mapped;
    std::string_view ours;  ///< what ratelimitd does with it (the doc's column)
    /// A value the start refuses, naming the variable (the test sets it); "" when
    /// none is.
    std::string_view refused_example;
};

/// Every variable, in settings.go's order.
std::span<const ErlVariable> erl_variables() noexcept;

/// The row of `name`, or nullptr.
const ErlVariable* find_erl_variable(std::string_view name) noexcept;

/// "mapped", "no effect" or "refused" as the doc's table writes it.
std::string_view to_string(ErlUse use) noexcept;

}  // namespace ratelimitd::erl
