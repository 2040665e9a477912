#pragma once

#include "ratelimitd/store/redis/value.hpp"

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

namespace ratelimitd::test {

// Redis replies built by hand, as the parsers under test receive them.

inline store::redis::Value integer(std::int64_t n) {
    store::redis::Value v;
    v.type = store::redis::Value::Type::integer;
    v.integer = n;
    return v;
}

inline store::redis::Value error(std::string text) {
    store::redis::Value v;
    v.type = store::redis::Value::Type::error;
    v.str = std::move(text);
    return v;
}

inline store::redis::Value string(std::string s) {
    store::redis::Value v;
    v.type = store::redis::Value::Type::string;
    v.str = std::move(s);
    return v;
}

inline store::redis::Value array(std::vector<store::redis::Value> elements) {
    store::redis::Value v;
    v.type = store::redis::Value::Type::array;
    v.elements.assign(std::make_move_iterator(elements.begin()), std::make_move_iterator(elements.end()));
    return v;
}

}  // namespace ratelimitd::test
