// A part of a whole as the reports print it: "12.34%", or "-" when the whole is 0.
#pragma once

#include <cstdint>
#include <string>

namespace ratelimitd::simulate {

std::string share_text(std::uint64_t part, std::uint64_t whole);

}  // namespace ratelimitd::simulate
