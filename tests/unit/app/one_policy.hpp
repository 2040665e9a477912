#pragma once

#include <string>

namespace ratelimitd::test {

/// The smallest config the settings tests load: one fixed-window policy.
inline const std::string policies = "policies:\n  p: {algorithm: fixed_window, limit: 1, window: 1s}\n";

}  // namespace ratelimitd::test
