// RateLimit-Signature: how a receiver knows an event came from ratelimitd and is fresh.
#pragma once

#include "ratelimitd/core/hmac_sha256.hpp"
#include "ratelimitd/policy/notify_rule.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace ratelimitd::notify {

/// The header's name, as sent.
inline constexpr std::string_view signature_header_name = "RateLimit-Signature";

/// Lower-case hex of HMAC-SHA256(key, message).
[[nodiscard]] std::string hmac_sha256_hex(std::string_view key, std::string_view message);

/// "t=<unix_seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with `secret`>" (docs/operations.md). The
/// time is signed with the body, so a receiver that checks it against its clock refuses a replay.
[[nodiscard]] std::string signature_value(std::string_view secret, std::int64_t unix_seconds, std::string_view body);

/// The same under a key whose pad states are already computed.
[[nodiscard]] std::string signature_value(const HmacSha256& key, std::int64_t unix_seconds, std::string_view body);

/// The same for a target: its precomputed signer when the loader made one, else its secret.
[[nodiscard]] std::string signature_value(const policy::NotifyTarget& target, std::int64_t unix_seconds,
                                          std::string_view body);

}  // namespace ratelimitd::notify
