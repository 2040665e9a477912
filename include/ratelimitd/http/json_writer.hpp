// Writes a JSON document straight into one string: the check answers are built on every
// request, and a DOM (a node, a key string and a map entry per field) costs dozens of heap
// allocations each time.
#pragma once

#include "ratelimitd/http/types.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ratelimitd::http {

/// Appends JSON tokens in order, placing commas and colons itself. Strings are escaped as
/// nlohmann::json::dump() escapes them (so answers are byte-for-byte what they were); text
/// that is not valid UTF-8 has the bad bytes replaced by U+FFFD, as dump() with
/// error_handler_t::replace does. The caller keeps the nesting balanced and at most
/// max_depth deep (deeper containers throw std::length_error: a programming error).
class JsonWriter {
public:
    static constexpr std::size_t max_depth = 8;

    explicit JsonWriter(std::size_t reserve = 256);

    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(std::string_view name);
    /// A key written in the source: appended as it is, with its quotes and colon, in one run
    /// (the answers' keys are constants; escaping them byte by byte on every check was waste).
    /// Only for plain keys: a literal holding `"`, `\` or a control byte must go through the
    /// string_view overload (debug builds assert it).
    template <std::size_t N>
    JsonWriter& key(const char (&name)[N]) {
        return literal_key(std::string_view(name, N - 1));
    }
    // Distinct names: an overload on bool would catch string literals.
    JsonWriter& string(std::string_view text);
    JsonWriter& number(std::int64_t n);
    JsonWriter& boolean(bool b);
    JsonWriter& null();

    /// The document; the writer is empty afterwards.
    PooledString take();

private:
    void before_value();
    JsonWriter& literal_key(std::string_view name);
    void open(char c);

    PooledString out_;  // recycled per thread: writing an answer calls no malloc
    std::array<bool, max_depth> has_items_{};  // per open container: something written already
    std::size_t depth_ = 0;
    bool after_key_ = false;
};

}  // namespace ratelimitd::http
