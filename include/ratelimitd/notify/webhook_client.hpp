// One delivery attempt of a quota webhook event: an HTTP/1.1 POST over plain TCP.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/notify_rule.hpp"

#include <boost/asio/awaitable.hpp>

#include <string>

namespace ratelimitd::notify {

/// POSTs `body` (application/json) to `target` with the RateLimit-Signature header
/// `signature`, on the calling coroutine's executor, and completes with the receiver's status
/// code, or store_unavailable with what failed (resolve, connect, write, read, or the whole
/// attempt past target.timeout). Reads at most 64 KiB of the answer. Never throws. Its messages
/// name the target and URL, never the secret.
boost::asio::awaitable<result<unsigned>> post_event(const policy::NotifyTarget& target, std::string body,
                                                     std::string signature);

}  // namespace ratelimitd::notify
