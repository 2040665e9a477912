// The --help text, written from the settings table.
#pragma once

#include <string>

namespace ratelimitd::config {

/// The commands, then one entry per row of the settings table (flag, variable, file key,
/// default and help line). The store URL forms are the backends' (app::usage adds them).
const std::string& usage();

}  // namespace ratelimitd::config
