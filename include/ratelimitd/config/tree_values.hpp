// The value rules of the config file's tree, one spelling of each message for the registry
// validator and the process settings alike ("expected an integer 1..256, got 0"). Each fails
// with a Problem whose detail the caller prefixes with the file and the field path.
#pragma once

#include "ratelimitd/core/error.hpp"

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ratelimitd::config {

/// ordered_json keeps the file's key order, so "the first problem" is the first in the file.
using ConfigTree = nlohmann::ordered_json;

/// What a value is, for "got ..." in messages: quoted text, the number, "a map", ...
std::string describe(const ConfigTree& v);

/// The type only ("a string", "an integer"), for values that must not be echoed (secrets).
std::string type_name(const ConfigTree& v);

/// "a, b, c" with `sep` between the words.
std::string join_words(std::span<const std::string_view> words, std::string_view sep);

/// An integer lo..hi: "expected an integer 1..256, got 0".
result<std::int64_t> integer_in(const ConfigTree& v, std::int64_t lo, std::int64_t hi);

/// true or false: "expected true or false, got \"yes\"".
result<bool> boolean_of(const ConfigTree& v);

/// One of `options`: "expected one of text, json, got \"xml\"".
result<std::string> one_of(const ConfigTree& v, std::span<const std::string_view> options);

/// A duration as text ("60s"); a bare integer is refused with the missing unit shown.
result<std::chrono::milliseconds> duration_of(const ConfigTree& v);

}  // namespace ratelimitd::config
