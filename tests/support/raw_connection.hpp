// A bare TCP connection for tests that need what HttpClient hides: partial and pipelined
// requests, HTTP/1.0, and seeing exactly when the server closes.
#pragma once

#include "support/http_client.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace ratelimitd::test {

/// One blocking connection to 127.0.0.1:`port`. Every wait is bounded by the timeout given.
class RawConnection {
public:
    /// Connects; throws std::runtime_error when that fails.
    explicit RawConnection(unsigned short port);
    ~RawConnection();
    RawConnection(RawConnection&& other) noexcept;
    RawConnection& operator=(RawConnection&&) = delete;
    RawConnection(const RawConnection&) = delete;
    RawConnection& operator=(const RawConnection&) = delete;

    int fd() const { return fd_; }

    /// Sends all of `bytes`; false when the connection is gone (reset, closed).
    bool send(std::string_view bytes);

    /// Reads one response (status line, headers, Content-Length body). `version` gets the
    /// status line's protocol ("HTTP/1.0"). Throws std::runtime_error on timeout, on close
    /// before a whole response, or on a response it cannot parse.
    HttpResponse read_response(std::chrono::milliseconds timeout, std::string* version = nullptr);

    /// True when the server closes the connection (end of stream or reset) within `timeout`;
    /// bytes arriving meanwhile are kept for read_response().
    bool closed_within(std::chrono::milliseconds timeout);

    /// True once the server has been seen closing (by closed_within or read_response).
    bool closed() const { return closed_; }

private:
    // Reads what is available within `timeout` into buffer_; false on timeout. Sets closed_
    // on end of stream or reset.
    bool fill(std::chrono::milliseconds timeout);

    int fd_ = -1;
    std::string buffer_;
    bool closed_ = false;
};

}  // namespace ratelimitd::test
