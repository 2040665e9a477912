// The access log: one line per decided check, by mode, sampled and capped per second.
#pragma once

#include "ratelimitd/http/router_options.hpp"
#include "ratelimitd/service/check_service.hpp"
#include "ratelimitd/service/metrics.hpp"

#include <cstdint>
#include <string_view>

namespace ratelimitd::http {

/// One per server thread (its counts are not shared).
class AccessLog {
public:
    AccessLog(const RouterOptions& options, service::Metrics& metrics) noexcept
        : options_(options), metrics_(metrics) {}

    /// Logs `d`, answered with `status`, when the mode, the sampling and this second's cap let
    /// it (a line over the cap is counted as dropped).
    void write(const service::Decision& d, unsigned status, std::string_view request_id);

private:
    const RouterOptions& options_;
    service::Metrics& metrics_;
    std::int64_t log_second_ = 0;  // the current second...
    int log_lines_ = 0;            // ...and the lines written in it (this thread only)
};

}  // namespace ratelimitd::http
