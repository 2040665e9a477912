// One delivery attempt of a quota webhook event: an HTTP/1.1 POST over plain TCP, or over TLS
// with the receiver's certificate verified for an https:// target.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/notify/connection_pool.hpp"
#include "ratelimitd/policy/notify_rule.hpp"

#include <boost/asio/awaitable.hpp>

#include <string>

namespace ratelimitd::notify {

/// POSTs `body` (application/json) to `target` with the RateLimit-Signature header
/// `signature`, on the calling coroutine's executor, and completes with the receiver's status
/// code, or store_unavailable with what failed (resolve, connect, the TLS handshake (a
/// certificate not from target.ca_file's CAs, or the system's, or not for target.host), write,
/// read, or the whole attempt past target.timeout). Reads at most 64 KiB of the answer. Never throws. Its messages
/// name the target and URL, never the secret.
/// With a `pool`, the request asks to keep the connection open, a kept one is used when the pool
/// has one (and, when the receiver had closed it, a new one at once), and the connection goes
/// back to the pool when both sides keep it; without, one connection for this request only. An
/// https:// target always gets a connection of its own.
boost::asio::awaitable<result<unsigned>> post_event(const policy::NotifyTarget& target, std::string body,
                                                     std::string signature, ConnectionPool* pool = nullptr);

}  // namespace ratelimitd::notify
