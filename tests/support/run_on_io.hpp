// Drives one coroutine to completion on a private io_context: the harness for unit tests of
// code that is asynchronous only because its store is.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <optional>
#include <utility>

namespace ratelimitd::test {

/// Runs `task` on a fresh io_context until the io_context runs out of work, and returns what
/// the coroutine returned (rethrowing what it threw). Never sleeps: the loop ends when every
/// handler the coroutine started has completed.
template <class T>
T run_on_io(boost::asio::awaitable<T> task) {
    boost::asio::io_context io;
    std::optional<T> out;
    std::exception_ptr failure;
    boost::asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
        failure = e;
        if (!e) out.emplace(std::move(value));
    });
    io.run();
    if (failure) std::rethrow_exception(failure);
    return std::move(*out);
}

/// run_on_io for a coroutine that returns nothing.
inline void run_on_io(boost::asio::awaitable<void> task) {
    boost::asio::io_context io;
    std::exception_ptr failure;
    boost::asio::co_spawn(io, std::move(task), [&](std::exception_ptr e) { failure = e; });
    io.run();
    if (failure) std::rethrow_exception(failure);
}

}  // namespace ratelimitd::test
