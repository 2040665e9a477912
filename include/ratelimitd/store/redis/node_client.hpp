// One Redis node as a client sees it: a pool of pipelined connections behind a circuit
// breaker, running commands and embedded scripts.
#pragma once

#include "ratelimitd/store/redis/circuit_breaker.hpp"
#include "ratelimitd/store/redis/connection.hpp"
#include "ratelimitd/store/redis/script_args.hpp"
#include "ratelimitd/store/redis/scripts.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <concepts>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::store::redis {

namespace detail {

/// The command `verb` `name` (EVALSHA and the digest, or EVAL and the text), then `args`,
/// written into a connection's output (Connection::async_exec).
struct ScriptCall {
    std::string_view verb;
    std::string_view name;
    const ScriptArgs* args;
    void operator()(std::string& out) const;
    /// The reply is read flat (Connection::async_exec asks this of what it writes).
    [[nodiscard]] bool flat_reply() const { return args->flat_reply(); }
};

/// Redis answered that it does not have the script (its cache was emptied).
[[nodiscard]] bool is_noscript(const result<Value>& reply) noexcept;

}  // namespace detail

/// A few connections to one node (or wherever an EndpointSource names) on one io_context,
/// picked round-robin among the ready ones. Every command feeds the circuit breaker; while
/// it is open, calls fail at once with store_unavailable and one PING per retry interval
/// finds out when the node answers again. Replies come back raw: a Redis error reply
/// (MOVED, ASK, NOSCRIPT...) is a Value, not a failure.
/// @par Thread Safety
/// Used only on the executor given at construction, except breaker_open().
class NodeClient {
public:
    using clock = Connection::clock;

    NodeClient(boost::asio::any_io_executor ex, Endpoint endpoint, std::chrono::milliseconds timeout,
               int connections, std::shared_ptr<EndpointSource> source = nullptr);
    ~NodeClient();
    NodeClient(const NodeClient&) = delete;
    NodeClient& operator=(const NodeClient&) = delete;

    /// EVALSHA of `script` with `args` (numkeys, keys, args), EVAL after NOSCRIPT, both within
    /// `deadline`; `done` (void(result<Value>)) runs once with the reply, never inside this
    /// call, on the executor associated with it (else the node's). With `asking`, ASKING goes
    /// first on the same connection, back-to-back with each command (the ASK redirect of Redis
    /// Cluster). `script` and `args` must stay alive and unchanged until `done` runs: they are
    /// written into the connection's output when the command is sent, and again if it must be
    /// sent as EVAL. No coroutine: what a call keeps lives in the handlers, whose memory
    /// Asio recycles.
    template <class Handler>
    void async_eval(const Script& script, const ScriptArgs& args, clock::time_point deadline, bool asking,
                    Handler done) {
        auto conn = connection_for_script();
        if (!conn) {
            auto ex = boost::asio::get_associated_executor(done, executor_);
            boost::asio::post(ex, [d = std::move(done), failure = conn.error()]() mutable {
                std::move(d)(result<Value>(std::move(failure)));
            });
            return;
        }
        std::shared_ptr<Connection> c = std::move(*conn);  // alive even if the pool were torn down
        if (asking) send_asking(*c, deadline);
        Connection& first = *c;
        first.async_exec(detail::ScriptCall{"EVALSHA", script.sha1, &args}, deadline,
                         [this, &script, &args, deadline, asking, c = std::move(c),
                          done = std::move(done)](result<Value> reply) mutable {
                             record(reply);
                             if (!detail::is_noscript(reply)) {
                                 finish(std::move(done), std::move(reply));
                                 return;
                             }
                             // The script cache was emptied (restart, failover, SCRIPT FLUSH): EVAL
                             // runs the script and caches it again, so later EVALSHAs find it.
                             if (asking) send_asking(*c, deadline);
                             c->async_exec(detail::ScriptCall{"EVAL", script.text, &args}, deadline,
                                           [this, done = std::move(done)](result<Value> again) mutable {
                                               record(again);
                                               finish(std::move(done), std::move(again));
                                           });
                         });
    }

    /// async_eval() for a coroutine: `args` must outlive the call (await it where they live;
    /// else eval_owned).
    boost::asio::awaitable<result<Value>> eval(const Script& script, const ScriptArgs& args,
                                               clock::time_point deadline, bool asking = false) {
        return boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void(result<Value>)>(
            [this, &script, &args, deadline, asking](auto handler) {
                async_eval(script, args, deadline, asking, std::move(handler));
            },
            boost::asio::use_awaitable);
    }
    /// The same, keeping `args` (a ScriptArgs) for as long as the call: for a caller that hands
    /// the call on unawaited (Redis Cluster's redirect loop). One coroutine frame more.
    template <class Args>
        requires std::derived_from<Args, ScriptArgs>
    boost::asio::awaitable<result<Value>> eval_owned(const Script& script, Args args, clock::time_point deadline,
                                                     bool asking = false) {
        co_return co_await eval(script, args, deadline, asking);
    }
    /// One plain command.
    boost::asio::awaitable<result<Value>> command(std::vector<std::string> argv, clock::time_point deadline,
                                                  bool asking = false);
    /// The breaker closed, a connection set up, and PING answered PONG within the timeout.
    boost::asio::awaitable<bool> ready();

    /// False while the breaker holds calls back.
    [[nodiscard]] bool allows() const noexcept { return breaker_.allow(); }
    /// The failure of a call the open breaker held back.
    [[nodiscard]] Problem circuit_open() const;

    /// Called each time one of the connections is set up again after a loss.
    void on_reconnected(const std::function<void()>& hook);
    /// Stops every connection and the probe (shutdown).
    void stop();
    /// The source names a new primary: every connection not already there reconnects now.
    void retarget();
    /// True once at least one connection is set up.
    [[nodiscard]] bool any_ready() const noexcept;
    /// Adds the state of each connection to `into`. Thread-safe (the metrics scrape): the
    /// pool is made in the constructor and never changes.
    void add_connection_states(ConnectionStates& into) const noexcept {
        for (const auto& c : connections_) c->add_state(into);
    }
    /// True while the circuit breaker holds calls back. Thread-safe (the metrics scrape).
    [[nodiscard]] bool breaker_open() const noexcept { return breaker_open_.load(std::memory_order_relaxed); }
    /// The node (or source) for logs, without credentials.
    [[nodiscard]] std::string describe() const;
    [[nodiscard]] const boost::asio::any_io_executor& executor() const noexcept { return executor_; }
    [[nodiscard]] bool stopped() const noexcept { return stopped_; }

private:
    Connection* pick() noexcept;
    /// The connection a script call goes on, or why there is none (the breaker holds calls
    /// back; nothing connected, which feeds the breaker).
    result<std::shared_ptr<Connection>> connection_for_script();
    /// Runs `done` with `reply` where it expects to run: here when that is the node's executor
    /// and this runs on it (from a reply's handler, itself posted), else posted.
    template <class Handler>
    void finish(Handler done, result<Value> reply) {
        auto ex = boost::asio::get_associated_executor(done, executor_);
        boost::asio::dispatch(ex, [d = std::move(done), r = std::move(reply)]() mutable { std::move(d)(std::move(r)); });
    }
    /// PING with the store timeout: true when the node answered PONG.
    boost::asio::awaitable<bool> ping();
    /// Feeds the breaker with the outcome of one command.
    void record(const result<Value>& outcome);
    void close_circuit();
    void schedule_probe();
    /// Sends ASKING on `c` with nothing awaited in between, so the next command follows it.
    static void send_asking(Connection& c, clock::time_point deadline);

    boost::asio::any_io_executor executor_;
    CircuitBreaker breaker_;
    std::atomic<bool> breaker_open_{false};  // mirror of breaker_ for other threads
    boost::asio::steady_timer probe_timer_;
    bool stopped_ = false;

    Endpoint endpoint_;
    std::shared_ptr<EndpointSource> source_;
    std::chrono::milliseconds timeout_;
    std::vector<std::shared_ptr<Connection>> connections_;
    std::size_t next_ = 0;
};

}  // namespace ratelimitd::store::redis
