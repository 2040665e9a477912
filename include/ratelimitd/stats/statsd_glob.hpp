// statsd_exporter's glob matching and capture expansion, for StatsdMapper.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::stats {

/// Whether `name` matches the glob split at '.' into `glob_parts`: as many dot-separated
/// parts, each `*` matching any run of bytes but '.', the other bytes themselves. One capture
/// per `*`, in order, appended to `captures`.
[[nodiscard]] bool glob_match(const std::vector<std::string>& glob_parts, std::string_view name,
                              std::vector<std::string>& captures);

/// `text` with $n and ${n} replaced by captures[n - 1] (empty when there is none).
[[nodiscard]] std::string expand_captures(std::string_view text, const std::vector<std::string>& captures);

}  // namespace ratelimitd::stats
