// Fuzz target: duration parsing and formatting; a parsed duration must format and parse back
// to the same value.
#include "ratelimitd/core/duration.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto d = ratelimitd::parse_duration(text);
    if (d) {
        auto again = ratelimitd::parse_duration(ratelimitd::format_duration(*d));
        if (!again || *again != *d) std::abort();
    }
    return 0;
}
