// request_to: a blocking POSIX socket, one send, recv to the end of stream.
#include "support/one_request.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <stdexcept>

namespace ratelimitd::test {

OneAnswer request_to(const std::string& address, unsigned short port, const std::string& wire) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    ::inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        throw std::runtime_error("cannot connect to " + address);
    }
    ::send(fd, wire.data(), wire.size(), MSG_NOSIGNAL);
    std::string got;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    if (got.size() < 12) throw std::runtime_error("no response from " + address);
    const auto body_at = got.find("\r\n\r\n");
    return {std::stoi(got.substr(9, 3)), body_at == std::string::npos ? "" : got.substr(body_at + 4)};
}

std::string get_wire(const std::string& target, const std::string& extra) {
    return "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + extra + "\r\n";
}

}  // namespace ratelimitd::test
