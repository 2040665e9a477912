// Redis replies read straight into Values: hiredis parses the protocol and calls our functions
// to build each member in place, so a batch reply is one Value per member and one vector per
// array, not hiredis's objects (one allocation per member) followed by a deep copy, and
// the root is the reader's own. A reply expected flat (lua/batch.lua's) is read into one
// vector of integers.
#pragma once

#include "ratelimitd/store/redis/value.hpp"

#include <cstddef>
#include <memory>
#include <string>

struct redisReader;

namespace ratelimitd::store::redis {

class ValueReader {
public:
    enum class Status {
        reply,       ///< a whole reply was read into `out`
        incomplete,  ///< the rest of the next reply has not arrived yet
        malformed,   ///< the bytes are not the Redis protocol, or memory ran out: drop the stream
    };

    ValueReader();
    ~ValueReader();
    ValueReader(const ValueReader&) = delete;
    ValueReader& operator=(const ValueReader&) = delete;

    /// Hands bytes read from the stream to the parser. False: out of memory.
    bool feed(const char* data, std::size_t n);
    /// The next whole reply, in the order the server sent them.
    Status next(Value& out);
    /// Whether the reply next() reads (or is reading) is read flat when it is an array: its
    /// integers into Value::integers, 8 bytes each, not a Value each (Value::Type::integers).
    /// Set before each next() for the reply it will read; it must not change while that reply
    /// is incomplete (Connection sets it from the command the reply answers).
    void expect_integers(bool flat) noexcept { state_.flat = flat; }
    /// What made next() answer malformed.
    [[nodiscard]] std::string error() const;

    /// What hiredis is handed (privdata): the reply being read, and how.
    struct State {
        Value root;
        bool flat = false;
    };

private:
    State state_;
    redisReader* reader_;
};

}  // namespace ratelimitd::store::redis
