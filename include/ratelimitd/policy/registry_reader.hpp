// Reads the text of a YAML or JSON config file into one JSON tree, within fixed bounds; the
// registry loader validates that tree. Every failure (syntax, a number out of range, a bound
// exceeded, any exception of the parsers) becomes a ConfigError naming the file and the
// position, never the text read there: a malformed line may hold a secret.
#pragma once

#include "ratelimitd/config/tree_values.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace ratelimitd::policy {

/// ordered_json keeps the file's key order, so "the first problem" is the first in the file.
using ConfigTree = config::ConfigTree;

namespace reader_bounds {
/// A config, not a data set; also the bound on text after YAML aliases are expanded.
inline constexpr std::size_t max_document_bytes = 16 * 1024 * 1024;
/// Maps and lists nested deeper than this are refused (the schema needs 6).
inline constexpr std::size_t max_depth = 64;
/// Values (scalars, maps, lists) in the tree, after YAML aliases are expanded.
inline constexpr std::size_t max_values = 1'000'000;
}  // namespace reader_bounds

/// The tree of `text`; `file_name` is used in messages and decides the syntax by its extension
/// (.yaml, .yml or .json, case-insensitive). Throws ConfigError, and nothing else.
ConfigTree read_config_tree(std::string_view text, const std::string& file_name);

/// The text of the file at `path`, at most max_document_bytes. Throws ConfigError
/// "<path>: cannot read: <reason>".
std::string read_config_file(const std::string& path);

}  // namespace ratelimitd::policy
