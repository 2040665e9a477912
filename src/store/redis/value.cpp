// Deep copy of a hiredis reply into an owned Value.
#include "ratelimitd/store/redis/value.hpp"

#include <hiredis/hiredis.h>

namespace ratelimitd::store::redis {

Value Value::from_reply(const redisReply* r) {
    Value v;
    if (r == nullptr) return v;
    switch (r->type) {
    case REDIS_REPLY_INTEGER:
        v.type = Type::integer;
        v.integer = r->integer;
        break;
    case REDIS_REPLY_STRING:
        v.type = Type::string;
        v.str.assign(r->str, r->len);
        break;
    case REDIS_REPLY_STATUS:
        v.type = Type::status;
        v.str.assign(r->str, r->len);
        break;
    case REDIS_REPLY_ERROR:
        v.type = Type::error;
        v.str.assign(r->str, r->len);
        break;
    case REDIS_REPLY_ARRAY:
        v.type = Type::array;
        v.elements.reserve(r->elements);
        for (size_t i = 0; i < r->elements; ++i) v.elements.push_back(from_reply(r->element[i]));
        break;
    default:
        break;  // nil
    }
    return v;
}

}  // namespace ratelimitd::store::redis
