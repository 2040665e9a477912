// One window's numbers, and what each algorithm's scripts can count exactly.
#include "ratelimitd/policy/window_limits.hpp"

#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/policy/calendar_section.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace ratelimitd::policy {
namespace {

using config::describe;

// `key` of `body` is a setting only of the algorithms `has` accepts.
void check_algorithm_key(const SchemaChecks& in, const ConfigTree& body, const std::string& path, const Policy& p,
                         const char* key, AlgorithmFilter has) {
    if (SchemaChecks::find(body, key) == nullptr || has(traits(p.algorithm))) return;
    in.fail(join(path, key), "only allowed with algorithm " + algorithm_names_or(has) + ", this policy uses " +
                                 to_string(p.algorithm));
}

// What the scripts of `p`'s algorithm keep exact: a member per unit, counts scaled by window ms.
void check_exactness(const SchemaChecks& in, const Policy& p, const std::string& path) {
    const AlgorithmTraits& t = traits(p.algorithm);
    if (t.member == ScriptMember::per_unit && p.limit > max_members) {
        in.fail(join(path, "limit"), "expected at most " + std::to_string(max_members) + " for " + t.name +
                                         " (each admitted unit is one sorted-set member in Redis), got " +
                                         std::to_string(p.limit));
    }
    if (t.ms_scaled && p.capacity() > max_exact_double / p.window.count()) {
        // The Lua script scales counts by milliseconds in doubles; beyond 2^53 they would round.
        in.fail(path, std::string("expected ") + (t.burst ? "burst" : "limit") +
                          " * window in ms <= 2^53 (9007199254740992) so the " + t.prose + " stays exact in Lua, got " +
                          std::to_string(p.capacity()) + " * " + std::to_string(p.window.count()));
    }
}

}  // namespace

void read_window(const SchemaChecks& in, const ConfigTree& body, const std::string& path, Policy& p) {
    check_algorithm_key(in, body, path, p, "lease", [](const AlgorithmTraits& t) { return t.leases; });
    const std::string limit_range = "an integer 1.." + std::to_string(max_limit);
    p.limit = in.need_int(in.require(body, path, "limit", limit_range), join(path, "limit"), 1, max_limit);

    const std::string window_path = join(path, "window");
    const ConfigTree& window = in.require(body, path, "window", duration_example);
    if (p.calendar) read_calendar_window(in, window, window_path, p);
    else p.window = in.need_duration(window, window_path);
    if (p.window > max_window) in.fail(window_path, "expected at most 365d, got " + describe(window));

    p.burst = p.limit;
    if (const ConfigTree* v = SchemaChecks::find(body, "burst")) {
        check_algorithm_key(in, body, path, p, "burst", [](const AlgorithmTraits& t) { return t.burst; });
        p.burst = in.need_int(*v, join(path, "burst"), 1, max_limit);
    }

    if (const ConfigTree* v = SchemaChecks::find(body, "max_debt")) {
        p.max_debt = in.need_int(*v, join(path, "max_debt"), 0, max_limit);
    }
    check_max_debt(in, p, path);
    check_exactness(in, p, path);
}

void check_max_debt(const SchemaChecks& in, const Policy& p, const std::string& path) {
    if (!p.max_debt) return;
    const std::string debt_path = join(path, "max_debt");
    const std::int64_t most = std::min(max_limit, max_debt_windows * p.limit);
    if (*p.max_debt > most) {
        in.fail(debt_path, "expected at most " + std::to_string(max_debt_windows) + " x limit (" + std::to_string(most) +
                               ": a key in debt lives (1 + max_debt / limit) windows), got " +
                               std::to_string(*p.max_debt));
    }
    // The scripts count debt in the same exact integers as the capacity (see check_exactness).
    if (traits(p.algorithm).ms_scaled && p.capacity() + *p.max_debt > max_exact_double / p.window.count()) {
        in.fail(debt_path, "expected (" + std::string(p.has_burst() ? "burst" : "limit") +
                               " + max_debt) * window in ms <= 2^53 (9007199254740992) so the debt stays exact in "
                               "Lua, got (" + std::to_string(p.capacity()) + " + " + std::to_string(*p.max_debt) +
                               ") * " + std::to_string(p.window.count()));
    }
}

}  // namespace ratelimitd::policy
