// share_text: two decimals, so a denied share of 0.01% still shows as more than none.
#include "ratelimitd/simulate/share_text.hpp"

#include <fmt/format.h>

namespace ratelimitd::simulate {

std::string share_text(std::uint64_t part, std::uint64_t whole) {
    if (whole == 0) return "-";
    return fmt::format("{:.2f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

}  // namespace ratelimitd::simulate
