// non_loopback_address: the first IPv4 interface address outside 127.0.0.0/8.
#include "support/non_loopback_address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace ratelimitd::test {

std::optional<std::string> non_loopback_address() {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return std::nullopt;
    std::optional<std::string> found;
    for (ifaddrs* it = list; it != nullptr && !found; it = it->ifa_next) {
        if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET) continue;
        const auto* in = reinterpret_cast<const sockaddr_in*>(it->ifa_addr);
        if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
        char text[INET_ADDRSTRLEN];
        found = ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    }
    ::freeifaddrs(list);
    return found;
}

}  // namespace ratelimitd::test
