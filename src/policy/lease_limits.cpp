// A concurrency policy's numbers: `limit` leases held at once, each for at most `lease`.
#include "ratelimitd/policy/limits_section.hpp"

#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/duration.hpp"

#include <nlohmann/json.hpp>

namespace ratelimitd::policy {
namespace {

// Each held lease is one sorted-set member, like a sliding-log unit: the same ceiling.
constexpr std::int64_t max_concurrency_limit = 100'000;
// A lease longer than a day is a slot nobody will wait for; a crashed holder keeps it that long.
constexpr std::chrono::milliseconds max_lease = std::chrono::hours(24);

}  // namespace

void LimitsSection::read_lease(const Json& body, const std::string& path, Policy& p) const {
    for (const char* other : {"window", "windows", "burst"}) {
        if (find(body, other) != nullptr) {
            fail(join(path, other), "not allowed with algorithm concurrency (it holds leases: set limit and lease)");
        }
    }
    const std::string limit_range = "an integer 1.." + std::to_string(max_concurrency_limit);
    p.limit = need_int(require(body, path, "limit", limit_range), join(path, "limit"), 1, max_concurrency_limit);
    p.burst = p.limit;

    const std::string lease_path = join(path, "lease");
    const Json& lease = require(body, path, "lease", duration_example);
    p.lease = need_duration(lease, lease_path);
    if (p.lease > max_lease) fail(lease_path, "expected at most 1d, got " + config::describe(lease));
    // The scripts and the headers read the span as the window (RateLimit-Policy w=).
    p.window = p.lease;
    p.windows.clear();
}

}  // namespace ratelimitd::policy
