// A small HTTP receiver for quota webhook tests: it accepts POSTs on a free loopback port,
// keeps every request it got, and answers 200 (or what the test says). It can be taken down
// and brought back on the same port.
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

    std::vector<ReceivedRequest> requests() const;
    std::size_t count() const;

private:
    void serve(int listener);
    void handle(int fd);

    unsigned short port_ = 0;
    std::atomic<int> status_{200};
    std::atomic<bool> stopping_{false};
    int listener_ = -1;
    std::thread thread_;
    mutable std::mutex mu_;
    std::vector<ReceivedRequest> requests_;
};

}  // namespace ratelimitd::test
