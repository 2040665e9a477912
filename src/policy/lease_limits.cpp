// The numbers of an algorithm holding leases (concurrency): `limit` leases held at once, each for at most `lease`.
#include "ratelimitd/policy/lease_limits.hpp"

#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/policy/window_limits.hpp"

#include <nlohmann/json.hpp>

namespace ratelimitd::policy {
namespace {

// A lease longer than a day is a slot nobody will wait for; a crashed holder keeps it that long.
constexpr std::chrono::milliseconds max_lease = std::chrono::hours(24);

}  // namespace

void read_lease(const SchemaChecks& in, const ConfigTree& body, const std::string& path, Policy& p) {
    for (const char* other : {"window", "windows", "burst"}) {
        if (SchemaChecks::find(body, other) != nullptr) {
            in.fail(join(path, other), "not allowed with algorithm " + std::string(to_string(p.algorithm)) +
                                           " (it holds leases: set limit and lease)");
        }
    }
    const std::string limit_range = "an integer 1.." + std::to_string(max_members);
    p.limit = in.need_int(in.require(body, path, "limit", limit_range), join(path, "limit"), 1, max_members);
    p.burst = p.limit;

    const std::string lease_path = join(path, "lease");
    const ConfigTree& lease = in.require(body, path, "lease", duration_example);
    p.lease = in.need_duration(lease, lease_path);
    if (p.lease > max_lease) in.fail(lease_path, "expected at most 1d, got " + config::describe(lease));
    // The scripts and the headers read the span as the window (RateLimit-Policy w=).
    p.window = p.lease;
    p.windows.clear();
}

}  // namespace ratelimitd::policy
