// A real nginx (the Debian package) serving the shipped config/nginx/ratelimitd.conf, with a
// tiny upstream behind it, on free loopback ports.
#pragma once

#include "support/processes.hpp"

#include <map>
#include <string>

namespace ratelimitd::test {

/// config/nginx/ratelimitd.conf with each ${NAME} of `vars` replaced, exactly as envsubst
/// would. Throws when the file still holds a placeholder afterwards.
std::string render_nginx_config(const std::map<std::string, std::string>& vars);

/// nginx running the rendered shipped config. Its upstream is another server block of the
/// same nginx that answers every request with 200 "upstream ok" and logs each one, so a test
/// can count exactly what reached the API.
class Nginx {
public:
    struct Options {
        unsigned short ratelimitd_port = 0;
        std::string down = "closed";  ///< RATELIMITD_DOWN
        /// Source address of nginx's connections to ratelimitd (proxy_bind), so tests can
        /// tell nginx (a trusted proxy) from a client connecting directly; empty: default.
        std::string proxy_bind;
    };

    explicit Nginx(const Options& options);
    /// Stops nginx with SIGTERM, so the master takes its workers down (a SIGKILL would
    /// leave them serving).
    ~Nginx();
    Nginx(const Nginx&) = delete;
    Nginx& operator=(const Nginx&) = delete;
    unsigned short port() const { return port_; }  ///< where clients connect
    Child& process() { return child_; }
    /// Requests the upstream (the protected API) has answered so far: its access log's lines.
    int upstream_requests() const;

private:
    std::string upstream_log_;
    unsigned short port_ = 0;
    unsigned short upstream_port_ = 0;
    Child child_;
};

}  // namespace ratelimitd::test
