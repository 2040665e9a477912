// ERL mode names what it ignores: a variable that looks like envoyproxy/ratelimit's or Envoy
// Gateway's (RUNTIME_*, REDIS_*, GRPC_*, ...) but is none ERL mode reads is warned at start by
// name, with the known name it most likely misspells. Silence would keep a typo's default in
// force (RUNTIME_IGNORE_DOTFILES for RUNTIME_IGNOREDOTFILES keeps dot files loaded).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::erl {

/// One warning line for each of `names` (the process environment's variable names) that
/// starts like a variable of envoyproxy/ratelimit or Envoy Gateway and is no row of
/// erl_variables() nor ERL mode's own (store_error_variable): "NAME is not read in ERL mode",
/// then "; did you mean KNOWN?" when a known name is within a small edit distance (or equal
/// once underscores are dropped). In the order of `names`. Never throws but for bad_alloc.
std::vector<std::string> unknown_variable_warnings(const std::vector<std::string>& names);

/// The known name `name` most likely misspells, or "" when none is close.
std::string closest_known_variable(std::string_view name);

}  // namespace ratelimitd::erl
