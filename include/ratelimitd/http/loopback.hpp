// Whether an address is this host's own: the admin endpoints' only callers without a token.
#pragma once

#include <string_view>

namespace ratelimitd::http {

/// True for a loopback address: 127.0.0.0/8, ::1, and IPv4-mapped ::ffff:127.x.y.z (how a
/// dual-stack socket reports a local IPv4 peer). False for anything else, including text that
/// is not an address and the unspecified 0.0.0.0 / ::. Never throws.
[[nodiscard]] bool is_loopback_address(std::string_view address) noexcept;

}  // namespace ratelimitd::http
