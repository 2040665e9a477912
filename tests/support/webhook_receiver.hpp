// A small HTTP receiver for quota webhook tests: it accepts POSTs on a free loopback port,
// keeps every request it got, and answers 200 (or what the test says). It can be taken down
// and brought back on the same port. It closes each connection after one answer, unless told to
// keep connections open (then each is served on a thread of its own).
#pragma once

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
    ~WebhookReceiver();
    WebhookReceiver(const WebhookReceiver&) = delete;
    WebhookReceiver& operator=(const WebhookReceiver&) = delete;

    unsigned short port() const { return port_; }
    std::string url(const std::string& path = "/hook") const {
        return "http://127.0.0.1:" + std::to_string(port_) + path;
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

    std::vector<ReceivedRequest> requests() const;
    std::size_t count() const;

private:
    void serve(int listener);
    /// Reads one request from `fd` and answers it; true when the connection stays open for more.
    bool handle(int fd, bool keep);
    /// A kept connection: requests until the client closes it or down().
    void serve_connection(int fd);

    unsigned short port_ = 0;
    std::atomic<int> status_{200};
    std::atomic<bool> stopping_{false};
    std::atomic<bool> keep_alive_{false};
    std::atomic<std::size_t> connections_{0};
    std::mutex kept_mu_;
    std::vector<int> kept_fds_;           ///< kept connections open now (down() shuts them)
    std::vector<std::thread> kept_threads_;
    int listener_ = -1;
    std::thread thread_;
    mutable std::mutex mu_;
    std::vector<ReceivedRequest> requests_;
};

}  // namespace ratelimitd::test
