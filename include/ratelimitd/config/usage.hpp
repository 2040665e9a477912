// The --help text, written from the settings table.
#pragma once

#include <string>

namespace ratelimitd::config {

/// The commands, then one entry per row of the settings table (flag, variable, file key,
/// default and help line), then the Redis URL forms.
const std::string& usage();

}  // namespace ratelimitd::config
