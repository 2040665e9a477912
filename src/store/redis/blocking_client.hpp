// A blocking Redis client with a timeout per step, for threads that may block (the Sentinel
// monitor): the same Transport as Connection, so it speaks TCP or TLS alike.
#pragma once

#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/value.hpp"
#include "ratelimitd/store/redis/value_reader.hpp"

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {

class Transport;

/// Runs its own io_context on the calling thread for each step, at most `timeout` each.
/// @par Thread Safety
/// One thread at a time.
class BlockingClient {
public:
    BlockingClient(Endpoint endpoint, std::chrono::milliseconds timeout);
    ~BlockingClient();
    BlockingClient(const BlockingClient&) = delete;
    BlockingClient& operator=(const BlockingClient&) = delete;

    /// Connects (and handshakes, for TLS). Empty on success, else why not.
    std::string connect();
    /// Sends `argv` and waits for its reply; nullopt with `why` set when there is none in time
    /// or the connection failed (it is then closed: connect() again to use it).
    std::optional<Value> command(const std::vector<std::string>& argv, std::string& why);
    /// Sends every command of `argvs` at once and waits for all their replies, in order, within
    /// one timeout; nullopt as command() does.
    std::optional<std::vector<Value>> pipeline(const std::vector<std::vector<std::string>>& argvs, std::string& why);
    /// The next message the server pushes (a subscription's), waiting at most `wait`: nullopt
    /// with `why` empty when none came, with `why` set when the connection failed. Once this
    /// is called, command() is not called again (a read may stay in flight between calls).
    std::optional<Value> receive(std::chrono::milliseconds wait, std::string& why);

private:
    /// Runs the io_context until `done` or the timeout; false on timeout (the stream is closed).
    bool run_until(const bool& done);
    /// A reply the reader holds already, if any; `why` set when the bytes are not Redis's.
    std::optional<Value> take_parsed(std::string& why);

    Endpoint endpoint_;
    std::chrono::milliseconds timeout_;
    boost::asio::io_context ioc_{1};
    std::unique_ptr<Transport> transport_;
    std::unique_ptr<ValueReader> reader_;  // a new one per connection: no bytes of the old
    std::string out_;
    std::vector<char> in_;
    bool read_in_flight_ = false;               // receive()'s read, kept across calls
    boost::system::error_code read_error_;
};

}  // namespace ratelimitd::store::redis
