// Coalesced checks over one node: the Coalescer's queue driven on the node's executor.
#pragma once

#include "ratelimitd/store/redis/coalescer.hpp"
#include "ratelimitd/store/redis/node_client.hpp"

#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace ratelimitd::store::redis {

/// Queues checks (Coalescer) and sends what it lets go as one lua/batch.lua call, or as the
/// algorithm's own script for a lone check; each caller resumes with its own reply element.
/// @par Thread Safety
/// Used only on the node's executor, except the counters.
class BatchSender {
public:
    BatchSender(NodeClient& node, Coalescing coalescing);
    ~BatchSender();
    BatchSender(const BatchSender&) = delete;
    BatchSender& operator=(const BatchSender&) = delete;

    /// Queues `check` when awaited and completes with its own reply. In a batch, a check's own
    /// script error comes back as bad_script_reply, never as an error Value, so it cannot be
    /// taken for a redirect of the whole call. Not a coroutine: `check` is taken before this
    /// returns, so the caller's coroutine frame holds no copy of it.
    boost::asio::awaitable<result<Value>> call(CheckArgs&& check, NodeClient::clock::time_point deadline);
    /// call(), for a caller whose own frame holds `check` until the awaitable completes
    /// (RedisStore::apply_into): the check is moved from there into the queue when awaited,
    /// not first through the initiation's arguments and frame.
    boost::asio::awaitable<result<Value>> call_held(CheckArgs& check, NodeClient::clock::time_point deadline);

    /// Fails every queued check; nothing will send them now.
    void stop();

    /// Script calls sent and the checks they carried. Thread-safe (the metrics scrape).
    [[nodiscard]] std::uint64_t batches_sent() const noexcept { return batches_sent_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t checks_batched() const noexcept { return checks_batched_.load(std::memory_order_relaxed); }

private:
    class SentBatch;  // batch_sender.cpp

    /// Queues `check` with `handler` to resume with its reply (the node's circuit allowing).
    template <class Handler>
    void wait_queued(Handler&& handler, QueuedCheck&& check);
    void enqueue(QueuedCheck&& check);
    /// Fails the expired checks, then sends batches while the Coalescer lets them go.
    void flush();
    /// Sends `batch` (its checks taken from the queue) as one script call.
    void send(std::unique_ptr<SentBatch> batch);
    /// Hands each check of `batch` its reply, and keeps `batch` for the next one.
    void on_reply(std::unique_ptr<SentBatch> batch, result<Value> reply);

    NodeClient& node_;
    Coalescer queue_;
    /// Batches answered, kept with their vectors' capacity: no allocation per batch sent.
    std::vector<std::unique_ptr<SentBatch>> spare_;
    std::size_t in_flight_ = 0;
    bool flush_posted_ = false;
    bool stopped_ = false;
    std::atomic<std::uint64_t> batches_sent_{0};
    std::atomic<std::uint64_t> checks_batched_{0};
};

}  // namespace ratelimitd::store::redis
