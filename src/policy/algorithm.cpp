// Looking algorithms up in algorithm_table: by name, and lists of names for config messages.
#include "ratelimitd/policy/algorithm.hpp"

namespace ratelimitd::policy {

const char* to_string(Algorithm a) noexcept {
    const auto i = static_cast<std::size_t>(a);
    return i < algorithm_count ? algorithm_table[i].name : "unknown";
}

std::optional<Algorithm> algorithm_named(std::string_view name) noexcept {
    for (const auto& row : algorithm_table) {
        if (row.configurable && name == row.name) return row.algorithm;
    }
    return std::nullopt;
}

std::vector<Algorithm> all_algorithms() {
    std::vector<Algorithm> all;
    for (const auto& row : algorithm_table) all.push_back(row.algorithm);
    return all;
}

std::vector<std::string_view> algorithm_names(AlgorithmFilter keep) {
    std::vector<std::string_view> names;
    for (const auto& row : algorithm_table) {
        if (row.configurable && (keep == nullptr || keep(row))) names.emplace_back(row.name);
    }
    return names;
}

std::string algorithm_names_or(AlgorithmFilter keep) {
    std::string out;
    for (std::string_view name : algorithm_names(keep)) {
        if (!out.empty()) out += " or ";
        out += name;
    }
    return out;
}

}  // namespace ratelimitd::policy
