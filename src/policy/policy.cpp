// Names of the policy enums as they are spelled in config files.
#include "ratelimitd/policy/policy.hpp"

namespace ratelimitd::policy {

const char* to_string(Algorithm a) noexcept {
    switch (a) {
    case Algorithm::token_bucket: return "token_bucket";
    case Algorithm::sliding_log: return "sliding_log";
    case Algorithm::fixed_window: return "fixed_window";
    case Algorithm::gcra: return "gcra";
    case Algorithm::sliding_window: return "sliding_window";
    }
    return "unknown";
}

}  // namespace ratelimitd::policy
