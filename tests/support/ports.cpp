// Loopback ports: a free one reserved across concurrent test processes, and a connect probe.
#include "support/ports.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace ratelimitd::test {

bool can_connect(unsigned short port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

namespace {

bool bindable(unsigned short port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const int on = 1;  // as redis-server and nginx bind: a port in TIME_WAIT is free to them
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

}  // namespace

// A port picked by bind(0) and released can be taken again before the server binds it: by the
// next bind(0) (another pick of this or another test process) or as the local port of any
// outgoing connection. So ports come from below the kernel's ephemeral range (32768-60999 by
// default), which neither draws from, and each pick is reserved for the life of this process
// by a lock file, so that concurrent test processes never pick the same one.
unsigned short free_port() {
    constexpr int first = 20000;
    constexpr int count = 12000;  // 20000..31999
    static std::mutex mu;
    static int next = static_cast<int>((static_cast<unsigned>(::getpid()) * 2654435761u) % count);
    std::lock_guard lock(mu);
    const std::string locks = "/tmp/ratelimitd-test-ports";
    ::mkdir(locks.c_str(), 0777);
    for (int tries = 0; tries < count; ++tries) {
        const auto port = static_cast<unsigned short>(first + next);
        next = (next + 1) % count;
        const std::string path = locks + "/" + std::to_string(port);
        const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) continue;
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // another live test process holds it
            ::close(fd);
            continue;
        }
        if (!bindable(port)) {
            ::close(fd);
            continue;
        }
        return port;  // fd stays open: the reservation lasts as long as this process
    }
    throw std::runtime_error("no free loopback port in 20000..31999");
}

}  // namespace ratelimitd::test
