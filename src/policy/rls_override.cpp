// Descriptor limit overrides: the unit and count checked, the fixed window they describe.
#include "ratelimitd/policy/rls_override.hpp"

#include "ratelimitd/policy/envoy_domain_reader.hpp"
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <chrono>

namespace ratelimitd::policy {

result<void> validate_override(const RlsLimitOverride& limit, std::size_t i) {
    const std::string path = "descriptors[" + std::to_string(i) + "].limit.";
    if (limit.unit < static_cast<std::uint32_t>(RlsUnit::second) || limit.unit > static_cast<std::uint32_t>(RlsUnit::week)) {
        return Problem{errc::invalid_request, path + "unit: expected 1 (SECOND) .. 7 (WEEK), got " +
                                                  std::to_string(limit.unit)};
    }
    // Any requests_per_unit a uint32 holds is a limit, as envoyproxy/ratelimit takes it: a
    // proxy's client may shape the override (dynamic metadata), and an error would admit.
    return {};
}

Policy override_policy(const RlsLimitOverride& limit, std::string label) {
    // As the reader makes a rule's default limit (EnvoyDomainReader::build_policy).
    Policy p;
    p.name = std::move(label);
    p.algorithm = Algorithm::fixed_window;
    p.limit = limit.requests_per_unit;
    p.burst = p.limit;
    p.window = std::chrono::seconds(unit_seconds(static_cast<RlsUnit>(limit.unit)));
    p.long_ttl = true;
    return p;
}

std::string override_label(std::string_view domain) { return escape_label_part(domain) + " (limit override)"; }

std::string override_key_name(std::string_view domain) { return escape_key_part(domain) + ".%o"; }

}  // namespace ratelimitd::policy
