// Deadline: the socket is closed when the last time given passes, a later time given before
// then keeps it open, and a time sooner than the watcher's nap still fires on time. Only
// lower bounds (and one loose upper bound) on elapsed time, so a loaded machine cannot fail it.
#include "ratelimitd/http/deadline.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include <array>
#include <optional>

namespace ratelimitd::http {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

/// A connected pair on loopback; `server` is the side under a deadline.
struct Pair {
    net::io_context io;
    tcp::socket server{io};
    tcp::socket client{io};
    Pair() {
        tcp::acceptor acceptor(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
        client.connect(acceptor.local_endpoint());
        acceptor.accept(server);
    }
};

/// Reads on `p.server` (the peer sends nothing) under `arm`'s deadlines; returns how long
/// the read waited before the deadline ended it, and whether the deadline says it expired.
template <class Arm>
std::pair<std::chrono::steady_clock::duration, bool> wait_for_close(Pair& p, std::chrono::milliseconds nap,
                                                                    Arm arm) {
    std::optional<Deadline> deadline;
    deadline.emplace(p.server, nap);
    const auto started = std::chrono::steady_clock::now();
    std::chrono::steady_clock::duration waited{};
    net::co_spawn(p.io, [&]() -> net::awaitable<void> {
        std::array<char, 16> sink{};
        co_await arm(*deadline);
        co_await p.server.async_read_some(net::buffer(sink), net::as_tuple(net::use_awaitable));
        waited = std::chrono::steady_clock::now() - started;
    }, net::detached);
    p.io.run_for(20s);
    return {waited, deadline->expired()};
}

TEST(Deadline, ClosesTheSocketWhenItsTimePasses) {
    Pair p;
    const auto [waited, expired] = wait_for_close(p, 1s, [](Deadline& d) -> net::awaitable<void> {
        d.expires_after(100ms);
        co_return;
    });
    EXPECT_TRUE(expired);
    EXPECT_GE(waited, 100ms);
    EXPECT_FALSE(p.server.is_open());
}

TEST(Deadline, ALaterTimeGivenBeforeThePassingKeepsTheSocketOpenUntilThen) {
    Pair p;
    const auto [waited, expired] = wait_for_close(p, 50ms, [&p](Deadline& d) -> net::awaitable<void> {
        d.expires_after(100ms);
        net::steady_timer pause(p.io, 60ms);
        co_await pause.async_wait(net::use_awaitable);
        d.expires_after(300ms);  // from now: the read must survive the first deadline
    });
    EXPECT_TRUE(expired);
    EXPECT_GE(waited, 360ms);
}

TEST(Deadline, ATimeSoonerThanTheNapStillFires) {
    Pair p;
    const auto [waited, expired] = wait_for_close(p, 10s, [](Deadline& d) -> net::awaitable<void> {
        d.expires_after(30s);   // the watcher sleeps its whole 10 s nap...
        d.expires_after(50ms);  // ...unless a sooner deadline wakes it
        co_return;
    });
    EXPECT_TRUE(expired);
    EXPECT_GE(waited, 50ms);
    EXPECT_LT(waited, 5s);
}

}  // namespace
}  // namespace ratelimitd::http
