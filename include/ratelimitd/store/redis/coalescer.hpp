// The coalescing queue without I/O: which waiting checks leave together in one batch call.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/store/redis/script_args.hpp"
#include "ratelimitd/store/redis/value.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

namespace ratelimitd::store::redis {

/// How apply() calls waiting on one thread's store are coalesced into lua/batch.lua calls.
/// A check is sent at once when no call awaits a reply. While k calls are out, another one
/// leaves only when at least k * fill_per_call checks wait (and k < max_in_flight); otherwise
/// they wait for the next reply and leave with every check that queued meanwhile. So an idle
/// server adds no delay, and under load the number of calls out adapts to the load: a few
/// checks more per call instead of one more call (each call costs Redis and the sidecar a
/// fixed price: the script's lookup and setup, a write and a read on both sides).
struct Coalescing {
    bool enabled = true;
    std::size_t max_batch = 64;     ///< checks in one call at most
    std::size_t max_in_flight = 4;  ///< calls sent and not yet answered, over all connections
    /// Checks that must wait, per call already out, before one more call leaves. Measured
    /// (bench/cpu.sh, Redis row, 32 connections): at 8, about two calls are out where four
    /// were, each carrying about twice the checks. 0: no fill rule.
    std::size_t fill_per_call = 8;
    /// On a Redis Cluster node: a batch carries only keys of one hash slot (the first queued
    /// check's), since a script call may not touch keys of several slots.
    bool one_slot_per_batch = false;
};

/// Resumes whoever waits for one queued check's reply.
struct ReplyWaiter {
    virtual ~ReplyWaiter() = default;
    /// One waiter is made per check: its memory comes from the blocks Asio's recycling allocator
    /// keeps per thread, not from the heap each time. (Sized delete: a waiter is deleted through
    /// this base, whose virtual destructor hands the derived type's size here.)
    static void* operator new(std::size_t size);
    static void operator delete(void* p, std::size_t size) noexcept;
    virtual void complete(result<Value> reply) = 0;
    /// The same, called from a handler running on the node's executor: resumes the caller
    /// there and then when it awaits on that executor too (else as complete() does).
    virtual void complete_here(result<Value> reply) = 0;
};

/// One check waiting for its batch to be sent and answered.
struct QueuedCheck {
    CheckArgs args;
    std::chrono::steady_clock::time_point deadline;  ///< the caller's; queueing counts against it
    std::unique_ptr<ReplyWaiter> done;               ///< may be null (tests)
    int slot = -1;                                   ///< hash slot, with one_slot_per_batch only
};

/// The queue of checks waiting to be sent, and the rule for what leaves next. It does no I/O
/// and reads no clock: the caller says how many calls are out and what time it is.
/// @par Thread Safety
/// None; one owner.
class Coalescer {
public:
    using time_point = std::chrono::steady_clock::time_point;

    /// max_batch and max_in_flight below 1 count as 1.
    explicit Coalescer(Coalescing limits);

    /// Queues a check behind the others (its slot computed when one_slot_per_batch).
    void push(QueuedCheck&& check);

    /// The next batch to send, or nothing when the queue is empty, `in_flight` calls are
    /// already out (max_in_flight), or fewer than in_flight * fill_per_call checks wait. A batch holds up to max_batch checks in queue order; with
    /// one_slot_per_batch only those of the first check's slot (the others keep their order).
    std::optional<std::vector<QueuedCheck>> take(std::size_t in_flight);
    /// The same into `batch` (emptied first; its capacity is kept, so a sender that reuses
    /// its vectors allocates none per batch). False when nothing leaves.
    bool take(std::size_t in_flight, std::vector<QueuedCheck>& batch);

    /// Removes and returns the checks whose deadline passed while they queued (at `now`):
    /// sending them would only spend Redis time on an answer nobody waits for.
    std::vector<QueuedCheck> take_expired(time_point now);

    /// Removes and returns every queued check (the store is stopping).
    std::vector<QueuedCheck> take_all();

    [[nodiscard]] std::size_t size() const noexcept { return queue_.size(); }
    [[nodiscard]] bool empty() const noexcept { return queue_.empty(); }
    [[nodiscard]] const Coalescing& limits() const noexcept { return limits_; }

private:
    Coalescing limits_;
    /// A vector, not a deque: it keeps its capacity when emptied, so a busy thread's queue
    /// allocates nothing per check once grown (a deque freed and took a block every few checks:
    /// 0.47 allocations per coalesced check). Taking from the front moves the few checks behind.
    std::vector<QueuedCheck> queue_;
};

/// The earliest deadline of a batch: no check waits past its own.
std::chrono::steady_clock::time_point batch_deadline(const std::vector<QueuedCheck>& batch);

}  // namespace ratelimitd::store::redis
