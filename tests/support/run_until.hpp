// Driving a private io_context until a condition holds: the harness of the tests that run a
// store's coroutines on their own thread, waiting on the io_context rather than sleeping.
#pragma once

#include <boost/asio/io_context.hpp>

#include <chrono>

namespace ratelimitd::test {

/// Runs `io`'s handlers one at a time until `done()` holds; false when `timeout` passes first.
template <class Done>
bool run_until(boost::asio::io_context& io, Done done, std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= until) return false;
        io.run_one_until(until);
    }
    return true;
}

}  // namespace ratelimitd::test
