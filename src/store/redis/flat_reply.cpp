// FlatReply: checks lua/batch.lua's flat reply once, then rebuilds each check's own reply.
#include "ratelimitd/store/redis/flat_reply.hpp"

#include "ratelimitd/store/redis/script_args.hpp"

#include <algorithm>

namespace ratelimitd::store::redis {

namespace {

// allowed, remaining, reset_after_ms (the build writes the same number into lua/batch.lua)
constexpr std::size_t per_check = reply_per_check;

bool is_integer(const Value& v) noexcept { return v.type == Value::Type::integer; }

Value integer(std::int64_t n) {
    Value v;
    v.type = Value::Type::integer;
    v.integer = n;
    return v;
}

}  // namespace

FlatReply::FlatReply(const result<Value>& reply, std::size_t n) : reply_(reply), n_(n) {
    whole_ = !reply_ || reply_->is_error();
    well_formed_ = !whole_ && well_formed();
}

bool FlatReply::well_formed() const noexcept {
    const Value& r = *reply_;
    if (r.type != Value::Type::array || n_ == 0) return false;
    const auto& e = r.elements;
    const std::size_t fixed = 1 + per_check * n_;
    if (e.size() < fixed || !is_integer(e[0])) return false;
    for (std::size_t at = 1; at < fixed; at += per_check) {
        // A check's own error stands in its allowed's place.
        if (!(is_integer(e[at]) || e[at].is_error()) || !is_integer(e[at + 1]) || !is_integer(e[at + 2])) return false;
    }
    // The extras: index, how many, the values.
    for (std::size_t at = fixed; at < e.size();) {
        if (at + 1 >= e.size() || !is_integer(e[at]) || !is_integer(e[at + 1])) return false;
        const std::int64_t index = e[at].integer;
        const std::int64_t count = e[at + 1].integer;
        if (index < 1 || static_cast<std::size_t>(index) > n_ || count < 1 ||
            static_cast<std::size_t>(count) > e.size() - at - 2) {
            return false;
        }
        for (std::size_t k = at + 2; k < at + 2 + static_cast<std::size_t>(count); ++k) {
            if (!is_integer(e[k])) return false;
        }
        at += 2 + static_cast<std::size_t>(count);
    }
    return true;
}

result<Value> FlatReply::element(std::size_t i, std::int64_t limit) const {
    if (!reply_) return reply_.error();
    if (whole_) return *reply_;
    if (!well_formed_ || i >= n_) {
        return Problem{errc::bad_script_reply, "expected lua/batch.lua's flat reply for " + std::to_string(n_) + " checks"};
    }
    const auto& e = reply_->elements;
    const std::size_t at = 1 + per_check * i;
    if (e[at].is_error()) return Problem{errc::bad_script_reply, "redis error: " + e[at].str};
    const std::int64_t now_ms = e[0].integer;
    const std::int64_t allowed = e[at].integer;
    const std::int64_t reset_after_ms = e[at + 2].integer;
    // As every script computes them from reset_ms = now + reset_after_ms.
    const std::int64_t reset_after_s = ceil_div(reset_after_ms, 1000);
    const std::int64_t retry_after_s = allowed == 0 ? std::max<std::int64_t>(1, reset_after_s) : 0;

    Value v;
    v.type = Value::Type::array;
    constexpr std::size_t fields = 7;
    v.elements.reserve(fields);
    for (const std::int64_t x : {allowed, limit, e[at + 1].integer, ceil_div(now_ms + reset_after_ms, 1000),
                                 retry_after_s, reset_after_s, reset_after_ms}) {
        v.elements.push_back(integer(x));
    }
    // This check's extras, if any (rare: a claimed quota webhook crossing).
    for (std::size_t k = 1 + per_check * n_; k < e.size(); k += 2 + static_cast<std::size_t>(e[k + 1].integer)) {
        if (static_cast<std::size_t>(e[k].integer) != i + 1) continue;
        for (std::size_t m = 0; m < static_cast<std::size_t>(e[k + 1].integer); ++m) {
            v.elements.push_back(integer(e[k + 2 + m].integer));
        }
    }
    return v;
}

}  // namespace ratelimitd::store::redis
