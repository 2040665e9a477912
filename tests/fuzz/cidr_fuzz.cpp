// Fuzz target: CIDR parsing and matching (trusted_proxies) with arbitrary text and addresses.
#include "ratelimitd/policy/cidr.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto split = text.find('|');
    const std::string_view net = text.substr(0, split);
    const std::string_view ip = split == std::string_view::npos ? text : text.substr(split + 1);
    if (auto cidr = ratelimitd::policy::parse_cidr(net)) (void)ratelimitd::policy::cidr_contains(*cidr, ip);
    return 0;
}
