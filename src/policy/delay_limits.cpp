// A policy's delay: the queue below an empty bucket that a check may reserve, in script units.
#include "ratelimitd/policy/delay_limits.hpp"

#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/duration.hpp"

#include <nlohmann/json.hpp>

namespace ratelimitd::policy {
namespace {

// The scripts keep every level an exact integer in a Lua double: the bucket and the queue
// below it together stay under 2^53 units.
constexpr std::int64_t exact_units = std::int64_t{1} << 53;

std::string algorithm_words(const Policy& p) { return "algorithm " + std::string(to_string(p.algorithm)); }

void refuse_where_meaningless(const SchemaChecks& in, const std::string& field_path, const Policy& p) {
    if (!p.has_burst()) {
        in.fail(field_path, "not allowed with " + algorithm_words(p) +
                                " (only token_bucket and gcra can delay: they know when the next unit is due)");
    }
    if (!p.windows.empty()) {
        in.fail(field_path, "not allowed with windows (a delay is one policy's one window)");
    }
}

void read_max_held(const SchemaChecks& in, const ConfigTree& body, const std::string& path, Policy& p) {
    const ConfigTree* max_held = SchemaChecks::find(body, "max_held");
    if (max_held == nullptr) return;
    const std::string field = join(path, "max_held");
    // Only /v1/auth holds, and only what a delay made it hold: alone it would bound nothing.
    if (!p.max_delay && !p.delay_at_once) in.fail(field, "needs max_delay or delay (it bounds the answers they hold)");
    p.max_held = in.need_int(*max_held, field, 1, largest_max_held);
}

}  // namespace

void rescale_delay(const SchemaChecks& in, const std::string& path, Policy& p) {
    if (!p.max_delay && !p.delay_at_once) return;
    if (!p.windows.empty()) in.fail(join(path, "windows"), "not allowed on a policy that delays (a delay is one window's)");
    const std::int64_t window = p.window.count();
    // max_delay ms refill max_delay * limit units; queued tokens are window units each
    const __int128 queue = p.max_delay ? static_cast<__int128>(p.max_delay->count()) * p.limit
                                       : static_cast<__int128>(p.queued_tokens) * window;
    if (static_cast<__int128>(p.burst) * window + queue > exact_units) {
        in.fail(path, "the burst and the delay together are too large for this window (at most 2^53 "
                      "units of 1/window_ms; shorten max_delay or the window)");
    }
    p.queue_units = static_cast<std::int64_t>(queue);
}

void read_delay(const SchemaChecks& in, const ConfigTree& body, const std::string& path, Policy& p) {
    const ConfigTree* max_delay = SchemaChecks::find(body, "max_delay");
    const ConfigTree* delay = SchemaChecks::find(body, "delay");
    if (max_delay == nullptr && delay == nullptr) {
        read_max_held(in, body, path, p);
        return;
    }
    if (max_delay != nullptr && delay != nullptr) {
        in.fail(join(path, "delay"), "not allowed with max_delay (choose one: delay counts units, max_delay time)");
    }
    if (max_delay != nullptr) {
        const std::string field = join(path, "max_delay");
        refuse_where_meaningless(in, field, p);
        const auto span = in.need_duration(*max_delay, field);
        if (span <= std::chrono::milliseconds(0) || span > longest_max_delay) {
            in.fail(field, "expected a duration 1ms..1h, got " + config::describe(*max_delay));
        }
        p.max_delay = span;
    } else {
        const std::string field = join(path, "delay");
        refuse_where_meaningless(in, field, p);
        if (SchemaChecks::find(body, "burst") == nullptr || p.burst < 2) {
            in.fail(field, "needs a burst of 2 or more (delay: N lets the first N of the burst pass at once)");
        }
        const std::int64_t at_once = in.need_int(*delay, field, 1, p.burst - 1);
        p.delay_at_once = at_once;
        p.queued_tokens = p.burst - at_once;
        p.burst = at_once;
    }
    read_max_held(in, body, path, p);
    rescale_delay(in, path, p);
}

}  // namespace ratelimitd::policy
