// parse_verdict: the one reader of the scripts' reply shape.
#include "ratelimitd/store/redis/verdict_reply.hpp"

namespace ratelimitd::store::redis {

std::int64_t window_seconds(const policy::Policy& p) noexcept {
    return std::max<std::int64_t>(1, (p.window.count() + 999) / 1000);
}

result<check::Verdict> parse_verdict(const Value& reply, const policy::Policy& p) {
    if (reply.is_error()) return Problem{errc::bad_script_reply, "redis error: " + reply.str};
    // allowed, limit, remaining, reset_epoch_s, retry_after_s, reset_after_s, reset_after_ms
    constexpr size_t fields = 7;
    if (reply.type != Value::Type::array || reply.elements.size() != fields) {
        return Problem{errc::bad_script_reply, "expected an array of 7 integers from the script"};
    }
    for (const auto& e : reply.elements) {
        if (e.type != Value::Type::integer) {
            return Problem{errc::bad_script_reply, "expected integers only from the script"};
        }
    }
    const auto& e = reply.elements;
    check::WindowState w;
    w.policy = p.name;
    w.allowed = e[0].integer == 1;
    w.limit = e[1].integer;
    w.window_s = window_seconds(p);
    w.remaining = std::max<std::int64_t>(0, e[2].integer);
    w.reset_epoch_s = e[3].integer;
    w.retry_after_s = e[4].integer;
    w.reset_after_s = e[5].integer;
    w.reset_after_ms = e[6].integer;

    check::Verdict v;
    v.allowed = w.allowed;
    v.windows.push_back(std::move(w));
    return v;
}

}  // namespace ratelimitd::store::redis
