// The items of a URL query (`a=1&b=2`), one at a time and undecoded: each caller decodes names
// and values with the percent options its door documents.
#pragma once

#include <optional>
#include <string_view>

namespace ratelimitd {

struct QueryItem {
    std::string_view name;   ///< before the first '=' (the whole item when there is none)
    std::string_view value;  ///< after the first '='; empty for a bare `name`
};

/// The next non-empty item, taken off the front of `query`; nullopt once nothing is left.
/// Empty items (`a=1&&b=2`, a trailing '&') are skipped.
[[nodiscard]] std::optional<QueryItem> next_query_item(std::string_view& query) noexcept;

}  // namespace ratelimitd
