// A real nginx (the Debian package) limiting with its own limit_req, no ratelimitd: the
// reference the auth_request door is compared with, side by side, on free loopback ports.
#pragma once

#include "support/processes.hpp"

#include <string>
#include <vector>

namespace ratelimitd::test {

/// nginx with `limit_req_zone $binary_remote_addr zone=z rate=<rate>` and, in its only
/// location, `limit_req zone=z <limit_req_args>` (e.g. "burst=5") with limit_req_status 429,
/// in front of an upstream that answers 200 and logs each request it served. Its error log
/// is at `warn`, so each delayed and each refused request leaves nginx's own line.
class NginxLimitReq {
public:
    NginxLimitReq(const std::string& rate, const std::string& limit_req_args);
    /// SIGTERM, so the master takes its worker down.
    ~NginxLimitReq();
    NginxLimitReq(const NginxLimitReq&) = delete;
    NginxLimitReq& operator=(const NginxLimitReq&) = delete;
    unsigned short port() const { return port_; }
    /// Requests the upstream has answered so far: its access log's lines.
    int upstream_requests() const;
    /// nginx's own "excess" of every request it delayed ("delaying request, excess: 1.000"),
    /// in requests, in log order.
    std::vector<double> delayed_excess() const;
    /// Requests nginx refused ("limiting requests, excess: ...").
    int refused_requests() const;

private:
    std::vector<std::string> error_lines_with(const std::string& marker) const;

    std::string dir_;
    unsigned short port_ = 0;
    unsigned short upstream_port_ = 0;
    Child child_;
};

}  // namespace ratelimitd::test
