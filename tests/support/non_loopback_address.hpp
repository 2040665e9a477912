// This machine's own address that is not loopback, for tests that must reach the server as a
// remote peer would (admin doors answer loopback peers differently).
#pragma once

#include <optional>
#include <string>

namespace ratelimitd::test {

/// An IPv4 address of this machine that is not loopback (eth0's), if it has one.
std::optional<std::string> non_loopback_address();

}  // namespace ratelimitd::test
