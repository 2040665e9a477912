// Where RLQS shares of a global budget are kept for the whole fleet (docs/rlqs.md, "Shares").
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::store {

/// One bucket of one report: what the Envoy used, and the rule's budget.
struct ShareAsk {
    std::string key;       ///< the bucket's ledger key (hash-tagged)
    std::string envoy;     ///< the stream's id: a reconnect is a new Envoy
    std::uint64_t allowed = 0;
    std::uint64_t denied = 0;
    std::chrono::milliseconds elapsed{0};
    std::int64_t limit = 0;
    std::chrono::milliseconds window{0};
    std::chrono::milliseconds ttl{0};
    std::chrono::milliseconds interval{0};
};

/// The Envoy's share until its next report, and what the ledger knows of the window.
struct ShareGrant {
    std::uint64_t grant = 0;  ///< the token bucket's max_tokens (0: deny until the next answer)
    std::uint64_t used = 0;   ///< the window's global usage, this report included
    std::uint64_t live = 0;   ///< Envoys holding a share of the bucket
};

/// The fleet's shares of every bucket, one atomic step per bucket of a report.
/// @par Thread Safety
/// take() may be called from any thread.
class ShareLedger {
public:
    virtual ~ShareLedger() = default;
    /// One grant per ask, in order; nullopt when the ledger did not answer within its bound
    /// (the caller applies the rule's fallback).
    virtual std::optional<std::vector<ShareGrant>> take(const std::vector<ShareAsk>& asks) = 0;
};

}  // namespace ratelimitd::store
