// A Redis reply, owned: ValueReader builds it as the bytes are parsed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {

struct Value {
    enum class Type { nil, integer, string, status, error, array };
    Type type = Type::nil;
    std::int64_t integer = 0;
    std::string str;               ///< string, status and error text
    std::vector<Value> elements;   ///< array members

    [[nodiscard]] bool is_error() const noexcept { return type == Type::error; }
};

}  // namespace ratelimitd::store::redis
