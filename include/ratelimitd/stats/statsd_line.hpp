// statsd counter lines as envoyproxy/ratelimit's stats library writes them:
// "name.__tag=value:delta|c\n", tags (EXTRA_TAGS) sorted by name, appended to the stat name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ratelimitd::stats {

using StatTags = std::vector<std::pair<std::string, std::string>>;

/// ".__k1=v1.__k2=v2" for `tags` sorted by name; ':' '|' and bytes outside '!'..'~' in a name
/// or value become '_' (they would end the line's name). "" without tags.
[[nodiscard]] std::string statsd_tag_suffix(StatTags tags);

/// Appends "name" + tag_suffix + ":" + delta + "|c\n".
void append_statsd_counter(std::string& out, std::string_view name, std::string_view tag_suffix, std::uint64_t delta);

}  // namespace ratelimitd::stats
