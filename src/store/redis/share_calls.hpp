// The calls of lua/rlqs_share.lua and the reading of their replies, shared by the share ledgers
// of one Redis (RedisShareLedger) and of a Redis Cluster (ClusterShareLedger).
#pragma once

#include "blocking_client.hpp"

#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/value.hpp"
#include "ratelimitd/store/share_ledger.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {

/// Most live Envoys the script keeps per bucket; past it new ids get the floor only.
inline constexpr int max_live_envoys = 256;

/// EVALSHA of lua/rlqs_share.lua for `ask` (EVAL with the script's text when `load` is set: a
/// Redis that restarted or flushed its scripts answers NOSCRIPT to EVALSHA).
std::vector<std::string> share_call(const ShareAsk& ask, bool load);

/// A NOSCRIPT error: the call changed nothing and may be sent again as EVAL.
bool is_noscript(const Value& reply);

/// A READONLY error: the node is a replica now (a Sentinel failover happened under us).
bool is_readonly(const Value& reply);

/// The script's {grant, used, live}, or nullopt when the reply is anything else.
std::optional<ShareGrant> grant_of(const Value& reply);

/// A connected client with AUTH and SELECT done, or null with `why` set.
std::unique_ptr<BlockingClient> open_share_client(const Endpoint& endpoint, std::chrono::milliseconds timeout,
                                                  std::string& why);

}  // namespace ratelimitd::store::redis
