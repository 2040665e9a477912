// A small HTTP receiver for quota webhook tests: it accepts POSTs on a free loopback port,
// keeps every request it got, and answers 200 (or what the test says). It can be taken down
// and brought back on the same port. It closes each connection after one answer, unless told to
// keep connections open (then each is served on a thread of its own). Given a certificate, it
// speaks HTTPS (TLS 1.2+) instead, one request per connection.
#pragma once

#include "support/tls_certs.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ratelimitd::test {

struct ReceivedRequest {
    std::string method;
    std::string target;
    std::map<std::string, std::string> headers;  ///< lower-case names
    std::string body;
};

class WebhookReceiver {
public:
    /// Listens on a free loopback port at once.
    WebhookReceiver();
    /// An HTTPS receiver serving `certificate` (from TlsCerts).
    explicit WebhookReceiver(const CertFiles& certificate);
    ~WebhookReceiver();
    WebhookReceiver(const WebhookReceiver&) = delete;
    WebhookReceiver& operator=(const WebhookReceiver&) = delete;

    unsigned short port() const { return port_; }
    std::string url(const std::string& path = "/hook") const {
        return std::string(tls_ != nullptr ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + path;
    }

    /// Stops listening (connections are refused) / listens again on the same port.
    void down();
    void up();
    /// The status answered from now on (200 unless set).
    void answer_with(int status) { status_ = status; }
    /// Keep connections open after an answer (HTTP keep-alive), for the connections accepted
    /// from now on; off unless set.
    void keep_alive(bool on) { keep_alive_ = on; }
    /// Connections accepted so far.
    std::size_t connections() const { return connections_; }
    /// HTTPS: connections whose TLS handshake failed (a client that refused the certificate).
    std::size_t failed_handshakes() const { return failed_handshakes_; }

    std::vector<ReceivedRequest> requests() const;
    std::size_t count() const;

private:
    void serve(int listener);
    /// Reads one request from `fd` (through `ssl` when not null) and answers it; true when the
    /// connection stays open for more.
    bool handle(int fd, bool keep, void* ssl = nullptr);
    /// HTTPS: the TLS handshake on `fd`, then its one request.
    void handle_tls(int fd);
    /// A kept connection: requests until the client closes it or down().
    void serve_connection(int fd);

    unsigned short port_ = 0;
    std::atomic<int> status_{200};
    std::atomic<bool> stopping_{false};
    std::atomic<bool> keep_alive_{false};
    std::atomic<std::size_t> connections_{0};
    std::atomic<std::size_t> failed_handshakes_{0};
    void* tls_ = nullptr;  ///< SSL_CTX*: HTTPS when set
    std::mutex kept_mu_;
    std::vector<int> kept_fds_;           ///< kept connections open now (down() shuts them)
    std::vector<std::thread> kept_threads_;
    int listener_ = -1;
    std::thread thread_;
    mutable std::mutex mu_;
    std::vector<ReceivedRequest> requests_;
};

}  // namespace ratelimitd::test
