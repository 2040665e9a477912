// Names of the policy enums as they are spelled in config files.
#include "ratelimitd/policy/policy.hpp"

namespace ratelimitd::policy {

const char* to_string(Algorithm a) noexcept {
    const auto i = static_cast<std::size_t>(a);
    return i < algorithm_count ? algorithm_names[i] : "unknown";
}

std::optional<Algorithm> algorithm_named(std::string_view name) noexcept {
    for (std::size_t i = 0; i < algorithm_count; ++i) {
        if (name == algorithm_names[i]) return static_cast<Algorithm>(i);
    }
    return std::nullopt;
}

}  // namespace ratelimitd::policy
