// FlatReply: checks lua/batch.lua's flat reply once, then rebuilds each check's own reply.
#include "ratelimitd/store/redis/flat_reply.hpp"

#include "ratelimitd/store/redis/script_args.hpp"

#include <algorithm>

namespace ratelimitd::store::redis {

namespace {

// allowed, remaining, reset_after_ms (the build writes the same number into lua/batch.lua)
constexpr std::size_t per_check = reply_per_check;

// Member k of the reply, read flat (Value::Type::integers: the connection's way) or as an
// array of Values (any other reader's): its integer, or else the member itself.
struct Member {
    bool is_integer = false;
    std::int64_t integer = 0;
    const Value* other = nullptr;  // not an integer: what it is
};

Member member(const Value& r, std::size_t k) noexcept {
    if (r.type == Value::Type::array) {
        const Value& e = r.elements[k];
        if (e.type == Value::Type::integer) return {true, e.integer, nullptr};
        return {false, 0, &e};
    }
    // Flat: the few members that are no integer are kept aside with their positions.
    for (const Value& e : r.elements) {
        if (e.integer == static_cast<std::int64_t>(k)) return {false, 0, &e};
    }
    return {true, r.integers[k], nullptr};
}

std::size_t size_of(const Value& r) noexcept {
    return r.type == Value::Type::array ? r.elements.size() : r.integers.size();
}

}  // namespace

FlatReply::FlatReply(const result<Value>& reply, std::size_t n) : reply_(reply), n_(n) {
    whole_ = !reply_ || reply_->is_error();
    well_formed_ = !whole_ && well_formed();
}

bool FlatReply::well_formed() const noexcept {
    const Value& r = *reply_;
    if ((r.type != Value::Type::array && r.type != Value::Type::integers) || n_ == 0) return false;
    const std::size_t size = size_of(r);
    const std::size_t fixed = 1 + per_check * n_;
    if (size < fixed || !member(r, 0).is_integer) return false;
    for (std::size_t at = 1; at < fixed; at += per_check) {
        // A check's own error stands in its allowed's place.
        const Member allowed = member(r, at);
        if (!(allowed.is_integer || allowed.other->is_error()) || !member(r, at + 1).is_integer ||
            !member(r, at + 2).is_integer) {
            return false;
        }
    }
    // The extras: index, how many, the values.
    for (std::size_t at = fixed; at < size;) {
        if (at + 1 >= size) return false;
        const Member index = member(r, at);
        const Member count = member(r, at + 1);
        if (!index.is_integer || !count.is_integer || index.integer < 1 || static_cast<std::size_t>(index.integer) > n_ ||
            count.integer < 1 || static_cast<std::size_t>(count.integer) > size - at - 2) {
            return false;
        }
        for (std::size_t k = at + 2; k < at + 2 + static_cast<std::size_t>(count.integer); ++k) {
            if (!member(r, k).is_integer) return false;
        }
        at += 2 + static_cast<std::size_t>(count.integer);
    }
    return true;
}

result<Value> FlatReply::element(std::size_t i, std::int64_t limit) const {
    if (!reply_) return reply_.error();
    if (whole_) return *reply_;
    if (!well_formed_ || i >= n_) {
        return Problem{errc::bad_script_reply, "expected lua/batch.lua's flat reply for " + std::to_string(n_) + " checks"};
    }
    const Value& r = *reply_;
    const std::size_t at = 1 + per_check * i;
    const Member first = member(r, at);
    if (!first.is_integer) return Problem{errc::bad_script_reply, "redis error: " + first.other->str};
    const std::int64_t now_ms = member(r, 0).integer;
    const std::int64_t allowed = first.integer;
    const std::int64_t remaining = member(r, at + 1).integer;
    const std::int64_t reset_after_ms = member(r, at + 2).integer;
    // As every script computes them from reset_ms = now + reset_after_ms.
    const std::int64_t reset_after_s = ceil_div(reset_after_ms, 1000);
    const std::int64_t retry_after_s = allowed == 0 ? std::max<std::int64_t>(1, reset_after_s) : 0;

    // A flat array, as the connection reads one: the numbers only, no Value each.
    Value v;
    v.type = Value::Type::integers;
    v.integers.assign({allowed, limit, remaining, ceil_div(now_ms + reset_after_ms, 1000), retry_after_s, reset_after_s,
                       reset_after_ms});
    // This check's extras, if any (rare: a claimed quota webhook crossing).
    const std::size_t size = size_of(r);
    for (std::size_t k = 1 + per_check * n_; k < size;) {
        const auto count = static_cast<std::size_t>(member(r, k + 1).integer);
        if (static_cast<std::size_t>(member(r, k).integer) == i + 1) {
            for (std::size_t m = 0; m < count; ++m) v.integers.push_back(member(r, k + 2 + m).integer);
        }
        k += 2 + count;
    }
    return v;
}

}  // namespace ratelimitd::store::redis
