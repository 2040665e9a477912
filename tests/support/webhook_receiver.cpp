// WebhookReceiver: one thread, blocking sockets, one request per connection; with keep_alive(),
// a thread per connection besides. The listener is polled so that down() can stop it.
#include "support/webhook_receiver.hpp"
#include "support/header_names.hpp"

#include "support/processes.hpp"

#include <openssl/ssl.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace ratelimitd::test {

namespace {

int listen_on(unsigned short port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 128) != 0) {
        ::close(fd);
        throw std::runtime_error("webhook receiver: cannot listen on port " + std::to_string(port));
    }
    return fd;
}

}  // namespace

WebhookReceiver::WebhookReceiver() : port_(free_port()) { up(); }

WebhookReceiver::WebhookReceiver(const CertFiles& certificate) : port_(free_port()) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(ctx, certificate.cert.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, certificate.key.c_str(), SSL_FILETYPE_PEM) != 1) {
        SSL_CTX_free(ctx);
        throw std::runtime_error("webhook receiver: cannot load " + certificate.cert);
    }
    tls_ = ctx;
    up();
}

WebhookReceiver::~WebhookReceiver() {
    down();
    SSL_CTX_free(static_cast<SSL_CTX*>(tls_));
}

void WebhookReceiver::up() {
    if (thread_.joinable()) return;
    stopping_ = false;
    listener_ = listen_on(port_);
    thread_ = std::thread([this, fd = listener_] { serve(fd); });
}

void WebhookReceiver::down() {
    if (!thread_.joinable()) return;
    stopping_ = true;
    thread_.join();
    ::close(listener_);
    listener_ = -1;
    std::vector<std::thread> kept;
    {
        std::lock_guard lock(kept_mu_);
        for (const int fd : kept_fds_) ::shutdown(fd, SHUT_RDWR);  // wakes its thread's recv
        kept.swap(kept_threads_);
    }
    for (auto& t : kept) t.join();
}

void WebhookReceiver::serve(int listener) {
    while (!stopping_) {
        pollfd p{listener, POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0) continue;
        const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        ++connections_;
        if (keep_alive_) {
            std::lock_guard lock(kept_mu_);
            kept_fds_.push_back(fd);
            kept_threads_.emplace_back([this, fd] { serve_connection(fd); });
            continue;
        }
        if (tls_ != nullptr) {
            handle_tls(fd);
        } else {
            handle(fd, false);
        }
        ::close(fd);
    }
}

void WebhookReceiver::handle_tls(int fd) {
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    SSL* ssl = SSL_new(static_cast<SSL_CTX*>(tls_));
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) == 1) {
        handle(fd, false, ssl);
        SSL_shutdown(ssl);
    } else {
        ++failed_handshakes_;
    }
    SSL_free(ssl);
}

void WebhookReceiver::serve_connection(int fd) {
    while (!stopping_ && handle(fd, true)) {
    }
    std::lock_guard lock(kept_mu_);
    kept_fds_.erase(std::find(kept_fds_.begin(), kept_fds_.end(), fd));
    ::close(fd);
}

bool WebhookReceiver::handle(int fd, bool keep, void* tls) {
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    SSL* ssl = static_cast<SSL*>(tls);
    const auto recv_some = [fd, ssl](char* to, std::size_t most) -> ssize_t {
        return ssl != nullptr ? SSL_read(ssl, to, static_cast<int>(most)) : ::recv(fd, to, most, 0);
    };
    std::string in;
    char buf[4096];
    std::size_t head_end = std::string::npos;
    while (head_end == std::string::npos) {
        const ssize_t n = recv_some(buf, sizeof buf);
        if (n <= 0) return false;
        in.append(buf, static_cast<std::size_t>(n));
        head_end = in.find("\r\n\r\n");
    }
    ReceivedRequest r;
    const std::string head = in.substr(0, head_end);
    std::size_t line_end = head.find("\r\n");
    const std::string request_line = head.substr(0, line_end);
    r.method = request_line.substr(0, request_line.find(' '));
    const auto target_at = request_line.find(' ') + 1;
    r.target = request_line.substr(target_at, request_line.find(' ', target_at) - target_at);
    while (line_end != std::string::npos && line_end < head.size()) {
        const auto next = head.find("\r\n", line_end + 2);
        const std::string line = head.substr(line_end + 2, next == std::string::npos ? std::string::npos : next - line_end - 2);
        const auto colon = line.find(':');
        if (colon != std::string::npos) {
            std::string value = line.substr(colon + 1);
            value.erase(0, value.find_first_not_of(' '));
            r.headers[lower(line.substr(0, colon))] = value;
        }
        line_end = next;
    }
    const std::size_t length = r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    r.body = in.substr(head_end + 4);
    while (r.body.size() < length) {
        const ssize_t n = recv_some(buf, sizeof buf);
        if (n <= 0) return false;
        r.body.append(buf, static_cast<std::size_t>(n));
    }
    {
        std::lock_guard lock(mu_);
        requests_.push_back(std::move(r));
    }
    const int status = status_;
    const std::string answer = "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: 0\r\nConnection: " +
                               (keep ? "keep-alive" : "close") + "\r\n\r\n";
    if (ssl != nullptr) return SSL_write(ssl, answer.data(), static_cast<int>(answer.size())) == static_cast<int>(answer.size()) && keep;
    return ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(answer.size()) && keep;
}

std::vector<ReceivedRequest> WebhookReceiver::requests() const {
    std::lock_guard lock(mu_);
    return requests_;
}

std::size_t WebhookReceiver::count() const {
    std::lock_guard lock(mu_);
    return requests_.size();
}

}  // namespace ratelimitd::test
