// Names of error codes and the throwing hook for result<T, Problem>::value().
#include "ratelimitd/core/error.hpp"

#include <stdexcept>

namespace ratelimitd {

std::string_view to_string(errc code) noexcept {
    switch (code) {
    case errc::invalid_request: return "invalid_request";
    case errc::unknown_policy: return "unknown_policy";
    case errc::unknown_plan: return "unknown_plan";
    case errc::invalid_cost: return "invalid_cost";
    case errc::payload_too_large: return "payload_too_large";
    case errc::not_found: return "not_found";
    case errc::method_not_allowed: return "method_not_allowed";
    case errc::store_unavailable: return "store_unavailable";
    case errc::store_timeout: return "store_timeout";
    case errc::bad_script_reply: return "bad_script_reply";
    case errc::too_many_connections: return "too_many_connections";
    case errc::header_too_large: return "header_too_large";
    case errc::config_pending: return "config_pending";
    }
    return "unknown_error";
}

void throw_exception_from_error(const Problem& p, const boost::source_location&) {
    throw std::runtime_error(std::string(to_string(p.code)) + ": " + p.detail);
}

}  // namespace ratelimitd
