// A reader for the one JSON shape a check body almost always has, that allocates nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ratelimitd::http {

/// One member of a flat object: a key and a value that is a string or an integer.
struct FlatMember {
    std::string_view key;    ///< the key's bytes between its quotes
    std::string_view value;  ///< a string's bytes between its quotes, or an integer's digits
    bool is_string = false;
    std::uint64_t number = 0;  ///< the integer's magnitude, when !is_string
    bool negative = false;     ///< the integer had a '-' (FlatSigns::allowed only)
};

/// Whether an integer may carry a '-' (a report's signed cost): off, a '-' sends the body
/// to the general parser.
enum class FlatSigns { refused, allowed };

/// Reads `body` when it is exactly one JSON object (whitespace around and between tokens
/// allowed) whose members are all strings of printable ASCII without escapes, or integers
/// of at most 18 digits without fraction, exponent or leading zero, and without sign unless
/// `signs` allows a '-' (never "-0"), and there are at most `out.size()` of them. Returns how
/// many members it wrote into `out` (in body order, viewing into `body`), or nullopt for
/// anything else: nested values, true/false/null,
/// escapes, non-ASCII, broken syntax, too many members. A nullopt says nothing about
/// validity: the caller then reads the body with a general JSON parser, which accepts
/// everything this does with the same members (RFC 8259) and words the errors.
std::optional<std::size_t> read_flat_object(std::string_view body, std::span<FlatMember> out,
                                            FlatSigns signs = FlatSigns::refused) noexcept;

}  // namespace ratelimitd::http
