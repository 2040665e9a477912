// One Redis node as a client sees it: a pool of pipelined connections behind a circuit
// breaker, running commands and embedded scripts.
#pragma once

#include "ratelimitd/store/redis/circuit_breaker.hpp"
#include "ratelimitd/store/redis/connection.hpp"
#include "ratelimitd/store/redis/script_args.hpp"
#include "ratelimitd/store/redis/scripts.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <concepts>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {

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
    /// `deadline`. With `asking`, ASKING goes first on the same connection, back-to-back with
    /// each command (the ASK redirect of Redis Cluster). `args` must outlive the call (await
    /// it where they live; else eval_owned): they are written into the connection's output
    /// when the command is sent, and again if it must be sent as EVAL.
    boost::asio::awaitable<result<Value>> eval(const Script& script, const ScriptArgs& args,
                                               clock::time_point deadline, bool asking = false);
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
