// One pipelined Redis connection on an Asio stream (TCP or TLS), with a deadline per command.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/endpoint_source.hpp"
#include "ratelimitd/store/redis/resp_command.hpp"
#include "ratelimitd/store/redis/scripts.hpp"
#include "ratelimitd/store/redis/value.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/recycling_allocator.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/common.h>

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {

namespace detail {

/// One command in flight. Finished exactly once: by its reply, its deadline, or the loss of
/// the connection, whichever comes first; the others then find it finished and do nothing.
struct Pending {
    explicit Pending(const boost::asio::any_io_executor& ex) : deadline(ex) {}
    virtual ~Pending() = default;
    virtual void finish(result<Value> r) = 0;  // posts the waiter's completion
    boost::asio::steady_timer deadline;
    bool finished = false;
    bool flat_reply = false;  ///< its reply is read flat (ValueReader::expect_integers)
};

template <class Handler>
struct PendingFor final : Pending {
    PendingFor(const boost::asio::any_io_executor& ex, Handler&& h)
        : Pending(ex), handler(std::move(h)) {}
    void finish(result<Value> r) override {
        // Never complete inline from inside the reply loop: post to the waiter's executor.
        auto ex = boost::asio::get_associated_executor(handler, deadline.get_executor());
        boost::asio::post(ex, [h = std::move(handler), r = std::move(r)]() mutable {
            std::move(h)(std::move(r));
        });
    }
    Handler handler;
};

struct Link;  // one socket and what is in flight on it (connection.cpp)

}  // namespace detail

/// Connections by state, summed for ratelimitd_redis_connections{state}.
struct ConnectionStates {
    std::uint64_t connected = 0;     ///< set up: ready() is true
    std::uint64_t connecting = 0;    ///< a socket open or opening, setup not answered yet
    std::uint64_t disconnected = 0;  ///< no socket: waiting to retry, or stopped
};

/// A Redis connection that connects, authenticates, selects the db and loads the scripts by
/// itself, and reconnects with backoff when it drops, until stop().
///
/// Commands are pipelined: many may be in flight, and replies come back in order. Each has
/// an absolute deadline; when it passes, the waiter gets store_timeout and the late reply is
/// thrown away when it arrives.
/// @par Thread Safety
/// Every member must be called on the executor given at construction (one io_context run by
/// one thread). Commands are encoded by append_command; hiredis's parser reads replies
/// (ValueReader); the socket is Asio's.
class Connection : public std::enable_shared_from_this<Connection> {
public:
    using clock = std::chrono::steady_clock;

    /// With a `source` (Sentinel), each (re)connect goes to `source->current()` instead of
    /// `endpoint`, and a READONLY reply (a demoted primary) drops the connection and tells
    /// the source.
    Connection(boost::asio::any_io_executor ex, Endpoint endpoint,
               std::shared_ptr<EndpointSource> source = nullptr);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    /// Called (on the connection's executor) each time a connection is set up again after it
    /// was lost: the server may have restarted empty.
    void on_reconnected(std::function<void()> hook) { on_reconnected_ = std::move(hook); }

    /// Starts connecting. Call once.
    void start();
    /// Closes the connection for good; commands in flight fail with store_unavailable.
    void stop();
    /// The source names another endpoint (a failover): unless already connected there, drop
    /// the connection (commands in flight fail with store_unavailable) and connect at once.
    void retarget();

    /// Connected and set up (AUTH, SELECT, SCRIPT LOAD answered).
    [[nodiscard]] bool ready() const noexcept { return ready_; }
    /// Adds this connection's state to `into`. Thread-safe (the metrics scrape).
    void add_state(ConnectionStates& into) const noexcept {
        if (ready_.load(std::memory_order_relaxed)) {
            ++into.connected;
        } else if (linked_.load(std::memory_order_relaxed)) {
            ++into.connecting;
        } else {
            ++into.disconnected;
        }
    }
    /// A context exists (connected or connecting): commands sent now are queued in order.
    [[nodiscard]] bool usable() const noexcept { return link_ != nullptr && !stopped_; }

    /// Sends a command and completes with the reply (a Redis error reply is a Value, not a
    /// failure) or with store_unavailable / store_timeout. `write(out)` appends the command in
    /// RESP to `out`, the connection's own output, when it is sent: the command needs no
    /// string of its own, and nothing it is written from is copied. When `write` has
    /// flat_reply() and it answers true, the reply is read flat (ValueReader::expect_integers).
    /// Completion signature: void(result<Value>). Never completes inside this call.
    template <class Write, class Token>
        requires std::invocable<const Write&, std::string&>
    auto async_exec(Write write, clock::time_point deadline, Token&& token) {
        return boost::asio::async_initiate<Token, void(result<Value>)>(
            [this](auto handler, const Write& w, clock::time_point at) {
                using H = std::decay_t<decltype(handler)>;
                // One per command: its memory is recycled by Asio per thread, not taken from the heap.
                auto p = std::allocate_shared<detail::PendingFor<H>>(
                    boost::asio::recycling_allocator<detail::PendingFor<H>>(), executor_, std::move(handler));
                if (!usable()) {
                    fail_unsent(*p);
                    return;
                }
                if constexpr (requires { w.flat_reply(); }) p->flat_reply = w.flat_reply();
                w(output());
                send(std::move(p), at);
            },
            token, std::move(write), deadline);
    }

    /// The same with `command` already in RESP (append_command).
    template <class Token>
    auto async_exec(std::string command, clock::time_point deadline, Token&& token) {
        return async_exec([c = std::move(command)](std::string& out) { out.append(c); }, deadline,
                          std::forward<Token>(token));
    }

private:
    using LinkPtr = std::shared_ptr<detail::Link>;

    void connect();
    void schedule_reconnect();
    void send_setup();
    void teardown(const char* why);
    /// Logs one failed attempt to connect or set up: the first of an outage at `level`, then
    /// one line per report interval counting the attempts meanwhile; the rest at debug.
    void report_failed_attempt(spdlog::level::level_enum level, const std::string& what);
    /// The link's output: encoded commands not yet handed to the stream. usable() only.
    std::string& output() noexcept;
    /// Expects the reply of the command just written to output() in turn, and starts writing.
    void send(std::shared_ptr<detail::Pending> p, clock::time_point deadline);
    /// Fails a command that could not be sent: there is no link.
    void fail_unsent(detail::Pending& p);
    /// Puts `command` (RESP) on the link's output, expecting its reply in turn (`p` null: setup).
    void enqueue(std::string command, std::shared_ptr<detail::Pending> p);

    void on_open(const LinkPtr& link, const std::string& failure);
    void flush(const LinkPtr& link);
    void read(const LinkPtr& link);
    void on_read(const LinkPtr& link, std::size_t n);
    /// The stream failed (the server closed it, a reset, a TLS alert): drop and reconnect.
    void on_lost(const LinkPtr& link, const std::string& why);
    void on_setup_reply(const Value& reply);
    void on_reply(detail::Pending& p, Value value);
    /// Ends the link: every command still waiting fails with store_unavailable.
    void drop_link();

    boost::asio::any_io_executor executor_;
    Endpoint endpoint_;
    std::shared_ptr<EndpointSource> source_;  // null: always endpoint_
    LinkPtr link_;                       // null while disconnected and waiting to retry
    std::atomic<bool> ready_{false};  // read by the start-up wait on another thread
    std::atomic<bool> linked_{false};  // mirror of link_ != nullptr for the metrics scrape
    bool stopped_ = false;
    int setup_pending_ = 0;              // setup replies still expected on this link
    std::chrono::milliseconds backoff_{0};
    boost::asio::steady_timer reconnect_timer_;
    boost::asio::steady_timer connect_timer_;
    clock::time_point last_reply_{};     // to detect a server that stopped answering
    bool was_ready_ = false;             // set up at least once before
    int failed_attempts_ = 0;            // since the connection was last set up
    clock::time_point next_failure_report_{};
    std::function<void()> on_reconnected_;
};

}  // namespace ratelimitd::store::redis
