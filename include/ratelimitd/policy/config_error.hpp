// The one exception of reading and validating a config file: what() names the file and the field.
#pragma once

#include <stdexcept>

namespace ratelimitd::policy {

/// A config that cannot be used. what() reads "<file>: <field path>: <what was expected>",
/// e.g. `ratelimitd.yaml: policies.login.window: expected a duration such as "500ms",
/// "60s" or "1m", got "60"`.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace ratelimitd::policy
