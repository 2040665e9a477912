// "host:port" as a log line or an address string shows it, an IPv6 host in brackets.
#pragma once

#include <string>

namespace ratelimitd {

/// "127.0.0.1:8081", "[::1]:8081".
std::string host_port(const std::string& host, unsigned short port);

}  // namespace ratelimitd
