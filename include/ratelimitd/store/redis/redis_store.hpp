// The production store: checks run as embedded scripts over pipelined connections of this
// thread's pool; checks waiting together are coalesced into one batch script call.
#pragma once

#include "ratelimitd/store/redis/circuit_breaker.hpp"
#include "ratelimitd/store/redis/connection.hpp"
#include "ratelimitd/store/redis/scripts.hpp"
#include "ratelimitd/store/store.hpp"

#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {

/// How apply() calls waiting on one thread's store are coalesced into lua/batch.lua calls.
/// A check is sent at once when fewer than `max_in_flight` calls await replies; otherwise it
/// waits for the next reply and leaves with every check that queued meanwhile, so batches
/// grow with load and an idle server adds no delay.
struct Coalescing {
    bool enabled = true;
    std::size_t max_batch = 64;     ///< checks in one call at most
    std::size_t max_in_flight = 4;  ///< calls sent and not yet answered, over all connections
    /// On a Redis Cluster node: a batch carries only keys of one hash slot (the first queued
    /// check's), since a script call may not touch keys of several slots.
    bool one_slot_per_batch = false;
};

/// The Redis store of one server thread: a few connections on that thread's io_context,
/// picked round-robin among the ready ones. apply() is coalesced (see Coalescing); layered
/// checks, peeks and resets are sent on their own.
/// @par Thread Safety
/// Used only on the executor given at construction.
class RedisStore final : public Store {
public:
    /// `instance_id` makes sliding-log members unique across sidecars (random per process).
    /// With a `source` (Sentinel), connections go wherever it names (see Connection).
    RedisStore(boost::asio::any_io_executor ex, Endpoint endpoint,
               std::chrono::milliseconds timeout, std::string instance_id,
               int connections = 2, Coalescing coalescing = {},
               std::shared_ptr<EndpointSource> source = nullptr);
    ~RedisStore() override;

    boost::asio::awaitable<result<check::Verdict>> apply(const policy::Policy& p, std::string key,
                                                         std::uint32_t cost) override;
    /// One EVALSHA of lua/multi.lua with every key: atomic on a single Redis. The keys may
    /// lie in different Redis Cluster slots, so layered limits need one Redis (or a hash tag).
    boost::asio::awaitable<result<check::Verdict>> apply_all(std::vector<LimitCheck> checks) override;
    boost::asio::awaitable<result<check::Verdict>> peek(const policy::Policy& p,
                                                        std::string key) override;
    boost::asio::awaitable<result<bool>> reset(std::string key) override;
    boost::asio::awaitable<bool> ready() override;
    std::string describe() const override;

    // ---- building blocks for cluster::ClusterStore, which routes between one RedisStore per
    // node. Each completes with the raw reply: a Redis error reply (MOVED, ASK, TRYAGAIN...)
    // is a Value, not a failure. With `asking`, ASKING goes first on the same connection,
    // back-to-back with the command (the ASK redirect), and nothing is coalesced.

    using clock = Connection::clock;

    /// One check's script; coalesced (see Coalescing) unless `asking` or coalescing is off.
    /// In a batch, a check's own script error comes back as bad_script_reply, never as an
    /// error Value, so it cannot be taken for a redirect of the whole call.
    boost::asio::awaitable<result<Value>> check_reply(const policy::Policy& p, std::string key,
                                                      std::uint32_t cost, clock::time_point deadline,
                                                      bool asking);
    /// lua/multi.lua over every key of `checks`.
    boost::asio::awaitable<result<Value>> layered_reply(const std::vector<LimitCheck>& checks,
                                                        clock::time_point deadline, bool asking);
    /// The algorithm's script in peek mode.
    boost::asio::awaitable<result<Value>> peek_reply(const policy::Policy& p, std::string key,
                                                     clock::time_point deadline, bool asking);
    /// One plain command, through the breaker.
    boost::asio::awaitable<result<Value>> command(std::vector<std::string> argv, clock::time_point deadline,
                                                  bool asking = false);
    /// Reading those replies (pure).
    static result<check::Verdict> layered_verdict(const Value& reply, const std::vector<LimitCheck>& checks);
    static result<check::Verdict> peek_verdict(const Value& reply, const policy::Policy& p);
    static result<bool> reset_result(const Value& reply);
    /// PUBLISH of a reset `key` on its reset channel (see reset_channel.hpp); a failure is
    /// logged, the reset stands.
    boost::asio::awaitable<void> publish_reset(const std::string& key, clock::time_point deadline);

    /// Called each time one of the connections is set up again after a loss.
    void on_reconnected(const std::function<void()>& hook);

    /// Stops every connection (shutdown).
    void stop();

    /// The source names a new primary: every connection not already there reconnects now.
    void retarget();

    /// True once at least one connection is set up.
    [[nodiscard]] bool any_ready() const noexcept;

    /// True while the circuit breaker holds checks back from a failing Redis.
    /// Thread-safe (read by the metrics scrape on another thread).
    [[nodiscard]] bool breaker_open() const noexcept { return breaker_open_.load(std::memory_order_relaxed); }

    /// Script calls sent by apply() and the checks they carried, since construction; their
    /// ratio is the mean batch size. Thread-safe (read by the metrics scrape).
    [[nodiscard]] std::uint64_t batches_sent() const noexcept { return batches_sent_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t checks_batched() const noexcept { return checks_batched_.load(std::memory_order_relaxed); }

private:
    /// Resumes one waiting apply() with its reply (posted, never inline).
    struct Waiter {
        virtual ~Waiter() = default;
        virtual void complete(result<Value> reply) = 0;
    };

    /// One apply() waiting for its batch to be sent and answered.
    struct QueuedCheck {
        policy::Algorithm algorithm;
        std::int64_t limit;
        std::int64_t window_ms;
        std::int64_t burst;
        std::uint32_t cost;
        std::string key;
        std::string member;                       ///< sliding log only
        Connection::clock::time_point deadline;   ///< when it was queued + the store timeout
        int slot;                                 ///< hash slot, with one_slot_per_batch only
        std::unique_ptr<Waiter> done;
    };

    Connection* pick() noexcept;
    boost::asio::awaitable<result<Value>> exec(Connection& c, std::vector<std::string> argv,
                                              Connection::clock::time_point deadline);
    /// PING with the store deadline: true when Redis answered PONG.
    boost::asio::awaitable<bool> ping();
    /// Feeds the breaker with the outcome of one command.
    void record(const result<Value>& outcome);
    void schedule_probe();
    /// EVALSHA of `script` with `argv` (numkeys, keys, args), through the breaker, EVAL after
    /// NOSCRIPT, both within `deadline`.
    boost::asio::awaitable<result<Value>> eval(const Script& script, std::vector<std::string> argv,
                                              Connection::clock::time_point deadline, bool asking = false);
    /// Sends ASKING on `c` with nothing awaited in between, so the next command follows it.
    static void send_asking(Connection& c, Connection::clock::time_point deadline);
    /// Queues a check and completes with its own reply (void(result<Value>)).
    boost::asio::awaitable<result<Value>> coalesce(const policy::Policy& p, std::string key,
                                                  std::uint32_t cost, Connection::clock::time_point deadline);
    void enqueue(QueuedCheck check);
    /// Sends queued checks while fewer than max_in_flight calls are out.
    void flush();
    boost::asio::awaitable<void> send_batch(std::vector<QueuedCheck> batch);
    /// A sliding-log member unique across sidecars; the other algorithms ignore it.
    std::string member_for(const policy::Policy& p);
    /// EVALSHA of the algorithm's script (EVAL after NOSCRIPT), within one deadline.
    boost::asio::awaitable<result<Value>> run_script(const policy::Policy& p, std::string key,
                                                    std::uint32_t cost, bool peek,
                                                    Connection::clock::time_point deadline, bool asking);

    boost::asio::any_io_executor executor_;
    CircuitBreaker breaker_;
    std::atomic<bool> breaker_open_{false};  // mirror of breaker_ for other threads
    boost::asio::steady_timer probe_timer_;
    bool stopped_ = false;

    Endpoint endpoint_;
    std::shared_ptr<EndpointSource> source_;
    std::chrono::milliseconds timeout_;
    std::string instance_id_;
    std::uint64_t sequence_ = 0;   // with instance_id_: unique sliding-log members
    std::vector<std::shared_ptr<Connection>> connections_;
    std::size_t next_ = 0;

    Coalescing coalescing_;
    std::deque<QueuedCheck> queue_;
    std::size_t in_flight_ = 0;
    bool flush_posted_ = false;
    std::atomic<std::uint64_t> batches_sent_{0};
    std::atomic<std::uint64_t> checks_batched_{0};
};

}  // namespace ratelimitd::store::redis
