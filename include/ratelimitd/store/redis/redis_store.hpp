// The production store: checks run as embedded scripts over pipelined connections of this
// thread's pool; checks waiting together are coalesced into one batch script call.
#pragma once

#include "ratelimitd/store/redis/batch_sender.hpp"
#include "ratelimitd/store/redis/coalescer.hpp"
#include "ratelimitd/store/redis/node_client.hpp"
#include "ratelimitd/store/redis/script_args.hpp"
#include "ratelimitd/store/store.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ratelimitd::store::redis {

/// The Redis store of one server thread: a NodeClient (a few connections on that thread's
/// io_context, the circuit breaker, script loading) to one Redis, or wherever a Sentinel
/// source names. apply() is coalesced (see Coalescing); layered checks, peeks and resets are
/// sent on their own.
/// @par Thread Safety
/// Used only on the executor given at construction, except the members marked thread-safe.
class RedisStore final : public Store {
public:
    using clock = NodeClient::clock;

    /// `instance_id` makes sliding-log members unique across sidecars (random per process).
    /// With a `source` (Sentinel), connections go wherever it names (see Connection).
    /// `layout`: how token buckets are written (redis_state_layout).
    RedisStore(boost::asio::any_io_executor ex, Endpoint endpoint,
               std::chrono::milliseconds timeout, std::string instance_id,
               int connections = 2, Coalescing coalescing = {},
               std::shared_ptr<EndpointSource> source = nullptr, StateLayout layout = StateLayout::string);
    ~RedisStore() override;

    boost::asio::awaitable<result<check::Verdict>> apply(const policy::Policy& p, std::string key,
                                                         std::uint32_t cost) override;
    /// The check's verdict parsed into `out` where it waits (apply() is this, moved out).
    boost::asio::awaitable<result<void>> apply_into(const policy::Policy& p, std::string key, std::uint32_t cost,
                                                    check::Verdict& out) override;
    /// apply_into(): this store looked nothing up at once.
    boost::asio::awaitable<result<void>> apply_declined_into(const policy::Policy& p, std::string key,
                                                             std::uint32_t cost, check::Verdict& out) override {
        return apply_into(p, std::move(key), cost, out);
    }
    /// One EVALSHA of lua/multi.lua with every key: atomic on a single Redis. The keys may
    /// lie in different Redis Cluster slots, so layered limits need one Redis (or a hash tag).
    boost::asio::awaitable<result<check::Verdict>> apply_all(std::vector<LimitCheck> checks) override;
    boost::asio::awaitable<result<check::Verdict>> peek(const policy::Policy& p,
                                                        std::string key) override;
    boost::asio::awaitable<result<bool>> reset(std::string key) override;
    /// One EVALSHA of lua/concurrency.lua in its "release" mode.
    boost::asio::awaitable<result<check::Verdict>> release(const policy::Policy& p, std::string key,
                                                           std::string lease) override;
    boost::asio::awaitable<bool> ready() override;
    std::string describe() const override;

    /// Called each time one of the connections is set up again after a loss.
    void on_reconnected(const std::function<void()>& hook);

    /// Stops every connection and fails the queued checks (shutdown).
    void stop();

    /// The source names a new primary: every connection not already there reconnects now.
    void retarget();

    /// True once at least one connection is set up.
    [[nodiscard]] bool any_ready() const noexcept;
    /// Adds its connections' states to `into`. Thread-safe (the metrics scrape).
    void add_connection_states(ConnectionStates& into) const noexcept { node_.add_connection_states(into); }

    /// True while the circuit breaker holds checks back from a failing Redis.
    /// Thread-safe (read by the metrics scrape on another thread).
    [[nodiscard]] bool breaker_open() const noexcept { return node_.breaker_open(); }

    /// Script calls sent by apply() and the checks they carried, since construction; their
    /// ratio is the mean batch size. Thread-safe (read by the metrics scrape).
    [[nodiscard]] std::uint64_t batches_sent() const noexcept { return batches_.batches_sent(); }
    [[nodiscard]] std::uint64_t checks_batched() const noexcept { return batches_.checks_batched(); }

private:
    /// A check sent on its own (coalescing off): its algorithm's script, or lua/batch.lua for
    /// one with webhook thresholds (its reply then is a batch of one). Takes `check` before it
    /// returns; not a coroutine, so the caller's frame holds no copy of it.
    boost::asio::awaitable<result<Value>> send_alone(CheckArgs&& check, clock::time_point deadline);
    /// PUBLISH of a reset `key` on its reset channel (see reset_channel.hpp); a failure is
    /// logged, the reset stands.
    boost::asio::awaitable<void> publish_reset(const std::string& key, clock::time_point deadline);

    NodeClient node_;
    BatchSender batches_;
    bool coalesce_;
    std::chrono::milliseconds timeout_;
    MemberSource members_;
};

}  // namespace ratelimitd::store::redis
