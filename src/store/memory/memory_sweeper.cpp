// MemorySweeper: a timer loop on the accept thread's executor around MemoryStore::sweep_expired().
#include "ratelimitd/store/memory/memory_sweeper.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

namespace ratelimitd::store::memory {

namespace net = boost::asio;

struct MemorySweeper::State {
    State(net::any_io_executor ex, MemoryStore& s, std::chrono::milliseconds i)
        : timer(std::move(ex)), store(s), interval(i) {}

    net::steady_timer timer;
    MemoryStore& store;
    std::chrono::milliseconds interval;
    bool stopped = false;
};

MemorySweeper::MemorySweeper(net::any_io_executor executor, MemoryStore& store,
                             std::chrono::milliseconds interval)
    : state_(std::make_shared<State>(std::move(executor), store, interval)) {}

MemorySweeper::~MemorySweeper() { stop(); }

void MemorySweeper::start() {
    net::co_spawn(
        state_->timer.get_executor(),
        [state = state_]() -> net::awaitable<void> {
            for (;;) {
                state->timer.expires_after(state->interval);
                boost::system::error_code ec;
                co_await state->timer.async_wait(net::redirect_error(net::use_awaitable, ec));
                // A wait that completed just before stop() still finds `stopped` here.
                if (state->stopped) co_return;
                const std::size_t dropped = state->store.sweep_expired();
                if (dropped > 0) spdlog::debug("embedded store: swept {} expired keys", dropped);
            }
        },
        net::detached);
}

void MemorySweeper::stop() {
    state_->stopped = true;
    state_->timer.cancel();
}

}  // namespace ratelimitd::store::memory
