// One HTTP request over a fresh connection to any IPv4 address: HttpClient only speaks to
// 127.0.0.1, and a test of who may call a door must call it from a non-loopback address too.
#pragma once

#include <string>

namespace ratelimitd::test {

/// The status and the body of one answer, read to the close.
struct OneAnswer {
    int status = 0;
    std::string body;
};

/// Sends `wire` (a whole request, with "Connection: close") to `address`:`port` and reads the
/// answer to the close, waiting at most 10 s for each read. Throws std::runtime_error when
/// the connection fails or no status line comes back.
OneAnswer request_to(const std::string& address, unsigned short port, const std::string& wire);

/// The wire of a GET of `target` with "Connection: close"; `extra` holds more header lines,
/// each ending in "\r\n".
std::string get_wire(const std::string& target, const std::string& extra = "");

}  // namespace ratelimitd::test
