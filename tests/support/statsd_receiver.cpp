// StatsdReceiver: poll on the socket and a pipe; each datagram split into lines.
#include "support/statsd_receiver.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace ratelimitd::test {

StatsdReceiver::StatsdReceiver() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || ::pipe(wake_) != 0) {
        throw std::runtime_error("statsd receiver: cannot bind a loopback UDP port");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { run(); });
}

StatsdReceiver::~StatsdReceiver() {
    const char stop = 1;
    (void)!::write(wake_[1], &stop, 1);
    thread_.join();
    ::close(fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
}

void StatsdReceiver::run() {
    std::string datagram(65536, '\0');
    while (true) {
        pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) continue;
        if (fds[1].revents != 0) return;
        const auto n = ::recv(fd_, datagram.data(), datagram.size(), 0);
        if (n <= 0) continue;
        std::lock_guard lock(mu_);
        std::size_t start = 0;
        const std::string_view text(datagram.data(), static_cast<std::size_t>(n));
        while (start < text.size()) {
            auto end = text.find('\n', start);
            if (end == std::string_view::npos) end = text.size();
            const std::string line(text.substr(start, end - start));
            start = end + 1;
            lines_.push_back(line);
            const auto colon = line.rfind(':');
            const auto bar = line.find("|c", colon == std::string::npos ? 0 : colon);
            if (colon == std::string::npos || bar == std::string::npos) continue;
            totals_[line.substr(0, colon)] += std::stoull(line.substr(colon + 1, bar - colon - 1));
        }
        changed_.notify_all();
    }
}

std::map<std::string, std::uint64_t> StatsdReceiver::wait_for(
    const std::function<bool(const std::map<std::string, std::uint64_t>&)>& done, std::chrono::milliseconds limit) {
    std::unique_lock lock(mu_);
    changed_.wait_for(lock, limit, [&] { return done(totals_); });
    return totals_;
}

std::vector<std::string> StatsdReceiver::lines() const {
    std::lock_guard lock(mu_);
    return lines_;
}

}  // namespace ratelimitd::test
