// RawConnection: POSIX sockets and poll(), with a minimal HTTP/1.x response reader.
#include "support/raw_connection.hpp"
#include "support/header_names.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <stdexcept>

namespace ratelimitd::test {

namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point until) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    return static_cast<int>(std::max<long long>(0, left));
}

std::string trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return std::string(s);
}

}  // namespace

RawConnection::RawConnection(unsigned short port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket() failed: errno " + std::to_string(errno));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        const int err = errno;
        ::close(fd_);
        fd_ = -1;
        throw std::runtime_error("connect to port " + std::to_string(port) + " failed: errno " + std::to_string(err));
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

RawConnection::~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
}

RawConnection::RawConnection(RawConnection&& other) noexcept
    : fd_(other.fd_), buffer_(std::move(other.buffer_)), closed_(other.closed_) {
    other.fd_ = -1;
}

bool RawConnection::send(std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

bool RawConnection::fill(std::chrono::milliseconds timeout) {
    if (closed_) return false;
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (r <= 0) return false;
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) {
        closed_ = true;  // end of stream, or reset
        return false;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
}

bool RawConnection::closed_within(std::chrono::milliseconds timeout) {
    const auto until = Clock::now() + timeout;
    while (!closed_) {
        // Looks at least once, so a zero timeout still sees a close that has arrived.
        if (!fill(std::chrono::milliseconds(remaining_ms(until))) && Clock::now() >= until) return closed_;
    }
    return true;
}

HttpResponse RawConnection::read_response(std::chrono::milliseconds timeout, std::string* version) {
    const auto until = Clock::now() + timeout;
    auto need = [&](auto ready) {
        while (!ready()) {
            if (closed_) throw std::runtime_error("connection closed before a whole response: \"" + buffer_ + "\"");
            const int left = remaining_ms(until);
            if (left == 0) throw std::runtime_error("no whole response in time, got \"" + buffer_ + "\"");
            fill(std::chrono::milliseconds(left));
        }
    };
    need([&] { return buffer_.find("\r\n\r\n") != std::string::npos; });
    const std::size_t head_end = buffer_.find("\r\n\r\n");
    const std::string head = buffer_.substr(0, head_end);

    HttpResponse res;
    std::size_t line_end = head.find("\r\n");
    const std::string status_line = head.substr(0, line_end);
    const auto sp = status_line.find(' ');
    if (sp == std::string::npos || status_line.size() < sp + 4) {
        throw std::runtime_error("bad status line \"" + status_line + "\"");
    }
    if (version) *version = status_line.substr(0, sp);
    res.status = std::stoi(status_line.substr(sp + 1, 3));
    while (line_end != std::string::npos && line_end < head.size()) {
        const std::size_t start = line_end + 2;
        line_end = head.find("\r\n", start);
        const std::string line = head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
        const auto colon = line.find(':');
        if (colon != std::string::npos) res.headers[lower(line.substr(0, colon))] = trim(line.substr(colon + 1));
    }
    const std::size_t length = res.header("content-length").empty() ? 0 : std::stoul(res.header("content-length"));
    need([&] { return buffer_.size() >= head_end + 4 + length; });
    res.body = buffer_.substr(head_end + 4, length);
    buffer_.erase(0, head_end + 4 + length);
    return res;
}

}  // namespace ratelimitd::test
