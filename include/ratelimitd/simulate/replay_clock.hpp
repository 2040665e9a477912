// The embedded store's time during a replay: the log's timestamps, never moving backwards.
#pragma once

#include "ratelimitd/core/clock.hpp"

#include <cstdint>

namespace ratelimitd::simulate {

/// now_ms() is the latest timestamp seen. A line logged earlier than that (several workers
/// write one log, each a little behind) is decided at the clock's time: moving the clock back
/// would let a store see time run backwards, which neither Redis nor the embedded store ever
/// does. Single-threaded, as a replay is.
class ReplayClock final : public Clock {
public:
    std::int64_t now_ms() const override { return now_; }

    /// Moves the clock to `t` when that is later; returns how far `t` is behind the clock
    /// (0 when it moved or stood still).
    std::int64_t advance_to(std::int64_t t) noexcept {
        if (t >= now_) {
            now_ = t;
            return 0;
        }
        return now_ - t;
    }

private:
    std::int64_t now_ = 0;
};

}  // namespace ratelimitd::simulate
