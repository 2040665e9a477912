#include "ratelimitd/core/host_port.hpp"

namespace ratelimitd {

std::string host_port(const std::string& host, unsigned short port) {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace ratelimitd
