// IPv4/IPv6 networks for trusted_proxies: parsing "10.0.0.0/8" and testing membership.
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <optional>
#include <string_view>

namespace ratelimitd::policy {

/// Parses "ADDRESS/PREFIX" or a bare address (meaning /32 for IPv4, /128 for IPv6).
/// Host bits below the prefix are cleared, so "10.1.2.3/8" gives the network 10.0.0.0/8. An
/// IPv4-mapped network of /96 or longer is the IPv4 network it maps ("::ffff:10.0.0.1/128" is
/// 10.0.0.1/32), as peers are canonicalised, so it matches the peers it names.
/// Returns nullopt for anything else (names, zone ids, brackets, prefix out of range).
[[nodiscard]] std::optional<Cidr> parse_cidr(std::string_view text) noexcept;

/// True when `ip` (a bare IPv4 or IPv6 address, no port, no brackets) lies inside `net`.
/// An IPv4-mapped IPv6 address (::ffff:10.0.0.1), as a dual-stack socket reports an IPv4
/// peer, is matched against IPv4 networks. An unparsable `ip` is in no network.
[[nodiscard]] bool cidr_contains(const Cidr& net, std::string_view ip) noexcept;

}  // namespace ratelimitd::policy
