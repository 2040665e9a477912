#include "ratelimitd/core/query_string.hpp"

namespace ratelimitd {

std::optional<QueryItem> next_query_item(std::string_view& query) noexcept {
    while (!query.empty()) {
        const auto amp = query.find('&');
        const std::string_view item = query.substr(0, amp);
        query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
        if (item.empty()) continue;
        const auto eq = item.find('=');
        if (eq == std::string_view::npos) return QueryItem{item, {}};
        return QueryItem{item.substr(0, eq), item.substr(eq + 1)};
    }
    return std::nullopt;
}

}  // namespace ratelimitd
