// hiredis's reader with our object functions: each reply member is built where it belongs.
#include "ratelimitd/store/redis/value_reader.hpp"

#include <hiredis/read.h>

#include <new>

namespace ratelimitd::store::redis {

namespace {

// The Value a task fills: a new root, or the next member of its parent array. hiredis reads
// members in order and finishes each before the next starts, so appending never moves a
// Value it still writes into: only the innermost open array grows, and its ancestors are
// left alone until it is done. Members therefore cost memory only as their bytes arrive
// (hiredis's own objects allocate a whole array's table from its header).
// A member of a flat array (Value::Type::integers) that is no integer (create_integer keeps
// those) is kept aside in its elements, with its position.
template <class Fill>
void* create(const redisReadTask* task, Fill fill) noexcept {
    try {
        if (task->parent != nullptr) {
            auto& parent = *static_cast<Value*>(task->parent->obj);
            Value& member = parent.elements.emplace_back();
            fill(member);
            if (parent.type == Value::Type::integers) {
                member.integer = static_cast<std::int64_t>(parent.integers.size());
                parent.integers.push_back(0);
            }
            return &member;
        }
        // The reader's own root (privdata): one reply is read at a time, and next() moves it
        // out before the next one starts, so no root is allocated per reply.
        Value* root = &static_cast<ValueReader::State*>(task->privdata)->root;
        *root = Value{};
        fill(*root);
        return root;
    } catch (const std::bad_alloc&) {
        return nullptr;  // hiredis reports "Out of memory" and frees the root
    } catch (const std::length_error&) {
        return nullptr;
    }
}

Value::Type string_type(int hiredis_type) {
    switch (hiredis_type) {
    case REDIS_REPLY_STATUS: return Value::Type::status;
    case REDIS_REPLY_ERROR: return Value::Type::error;
    default: return Value::Type::string;
    }
}

void* create_string(const redisReadTask* task, char* str, std::size_t len) {
    return create(task, [&](Value& v) {
        v.type = string_type(task->type);
        v.str.assign(str, len);
    });
}

void* create_array(const redisReadTask* task, int elements) {
    const bool flat = task->parent == nullptr && static_cast<ValueReader::State*>(task->privdata)->flat;
    return create(task, [&](Value& v) {
        // A bounded first guess: the header alone must not decide how much is allocated.
        if (flat) {
            v.type = Value::Type::integers;
            constexpr int first_guess = 1024;  // 8 KB: a batch of 64 checks needs 193
            v.integers.reserve(static_cast<std::size_t>(elements < first_guess ? elements : first_guess));
            return;
        }
        v.type = Value::Type::array;
        constexpr int first_guess = 64;
        v.elements.reserve(static_cast<std::size_t>(elements < first_guess ? elements : first_guess));
    });
}

void* create_integer(const redisReadTask* task, long long value) {
    if (task->parent != nullptr) {
        auto& parent = *static_cast<Value*>(task->parent->obj);
        if (parent.type == Value::Type::integers) {
            // A flat array's member: 8 bytes in its vector.
            try {
                parent.integers.push_back(value);
            } catch (const std::bad_alloc&) {
                return nullptr;
            } catch (const std::length_error&) {
                return nullptr;
            }
            return &parent;  // hiredis wants an object; it keeps only the root's
        }
    }
    return create(task, [&](Value& v) {
        v.type = Value::Type::integer;
        v.integer = value;
    });
}

void* create_nil(const redisReadTask* task) {
    return create(task, [](Value& v) { v.type = Value::Type::nil; });
}

// hiredis frees only roots (a failed read, the reader's end); members live inside them, and
// the root is the reader's own: emptied, not deleted.
void free_root(void* root) { *static_cast<Value*>(root) = Value{}; }

redisReplyObjectFunctions value_functions{create_string, create_array, create_integer, create_nil, free_root};

}  // namespace

ValueReader::ValueReader() : reader_(redisReaderCreateWithFunctions(&value_functions)) {
    if (reader_ == nullptr) throw std::bad_alloc();
    reader_->privdata = &state_;  // (hiredis 0.14's redisReaderSetPrivdata casts it to int)
}

ValueReader::~ValueReader() { redisReaderFree(reader_); }

bool ValueReader::feed(const char* data, std::size_t n) { return redisReaderFeed(reader_, data, n) == REDIS_OK; }

ValueReader::Status ValueReader::next(Value& out) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_, &raw) != REDIS_OK) return Status::malformed;
    if (raw == nullptr) return Status::incomplete;
    out = std::move(*static_cast<Value*>(raw));
    return Status::reply;
}

std::string ValueReader::error() const { return reader_->errstr; }

}  // namespace ratelimitd::store::redis
