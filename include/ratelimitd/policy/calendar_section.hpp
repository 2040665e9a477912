// `align:` and `utc_offset:` of a policy or of one of its windows, and the `window:` of an
// aligned one.
#pragma once

#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

#include <string>

namespace ratelimitd::policy {

/// `align:` and `utc_offset:` of `body` into p.calendar (a placeholder unit until the window is
/// read) and p.utc_offset_minutes; absent: what `p` has (a window inherits its policy's).
/// align: calendar only on an algorithm whose windows may be aligned, utc_offset only with it.
void read_alignment(const SchemaChecks& in, const ConfigTree& body, const std::string& path, Policy& p);

/// The `window:` of a calendar-aligned policy: one of 1m, 1h, 1d, 1w, 1mo, 1y.
void read_calendar_window(const SchemaChecks& in, const ConfigTree& window, const std::string& window_path,
                          Policy& p);

}  // namespace ratelimitd::policy
