// An owned copy of a Redis reply, made inside the hiredis callback (hiredis frees its own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct redisReply;

namespace ratelimitd::store::redis {

struct Value {
    enum class Type { nil, integer, string, status, error, array };
    Type type = Type::nil;
    std::int64_t integer = 0;
    std::string str;               ///< string, status and error text
    std::vector<Value> elements;   ///< array members

    [[nodiscard]] bool is_error() const noexcept { return type == Type::error; }

    /// Deep copy of a hiredis reply; nullptr becomes nil.
    static Value from_reply(const redisReply* r);
};

}  // namespace ratelimitd::store::redis
