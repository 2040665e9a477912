// BatchSender: posts a flush per turn of the event loop, sends batches, hands out replies.
#include "ratelimitd/store/redis/batch_sender.hpp"

#include "ratelimitd/store/redis/verdict_reply.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <ranges>

namespace ratelimitd::store::redis {

namespace net = boost::asio;

namespace {

// Resumes the awaiting call() with its reply: posted, or at once when the caller is already
// in a handler of the node's executor and the awaiting coroutine runs there too.
template <class Handler>
struct WaiterFor final : ReplyWaiter {
    WaiterFor(net::any_io_executor ex, Handler&& h) : executor(std::move(ex)), handler(std::move(h)) {}
    void complete(result<Value> reply) override {
        auto ex = net::get_associated_executor(handler, executor);
        net::post(ex, [h = std::move(handler), r = std::move(reply)]() mutable { std::move(h)(std::move(r)); });
    }
    void complete_here(result<Value> reply) override {
        if (net::get_associated_executor(handler, executor) != executor) {
            complete(std::move(reply));
            return;
        }
        std::move(handler)(std::move(reply));
    }
    net::any_io_executor executor;
    Handler handler;
};

/// Hands each check of an answered batch its own reply element.
void complete_batch(std::vector<QueuedCheck>& batch, result<Value>& reply, bool grouped) {
    const std::size_t n = batch.size();
    for (std::size_t i = 0; i < n; ++i) batch[i].done->complete_here(batch_element(reply, n, i, grouped));
}

}  // namespace

BatchSender::BatchSender(NodeClient& node, Coalescing coalescing) : node_(node), queue_(coalescing) {}

// Not a coroutine: the awaitable of the initiation is returned as it is, one coroutine frame
// per check fewer.
net::awaitable<result<Value>> BatchSender::call(CheckArgs&& check, NodeClient::clock::time_point deadline) {
    return net::async_initiate<decltype(net::use_awaitable), void(result<Value>)>(
        [this](auto handler, QueuedCheck q) {
            auto waiter = std::make_unique<WaiterFor<decltype(handler)>>(node_.executor(), std::move(handler));
            if (!node_.allows()) {
                waiter->complete(node_.circuit_open());
                return;
            }
            q.done = std::move(waiter);
            enqueue(std::move(q));
        },
        net::use_awaitable, QueuedCheck{std::move(check), deadline, nullptr});
}

void BatchSender::stop() {
    stopped_ = true;
    flush();
}

void BatchSender::enqueue(QueuedCheck check) {
    queue_.push(std::move(check));
    // Flush once the handlers already runnable have run: checks arriving in the same turn
    // of the event loop leave together even while few calls are out.
    if (!flush_posted_) {
        flush_posted_ = true;
        net::post(node_.executor(), [this] {
            flush_posted_ = false;
            flush();
        });
    }
}

void BatchSender::flush() {
    if (stopped_) {
        for (auto& check : queue_.take_all()) {
            check.done->complete(Problem{errc::store_unavailable, "the redis store is stopping"});
        }
        return;
    }
    for (auto& check : queue_.take_expired(NodeClient::clock::now())) {
        check.done->complete(Problem{errc::store_timeout, "redis did not answer in time"});
    }
    while (auto batch = queue_.take(in_flight_)) {
        ++in_flight_;
        net::co_spawn(node_.executor(), send(std::move(*batch)), net::detached);
    }
}

net::awaitable<void> BatchSender::send(std::vector<QueuedCheck> batch) {
    const auto deadline = batch_deadline(batch);
    const std::size_t n = batch.size();
    batches_sent_.fetch_add(1, std::memory_order_relaxed);
    checks_batched_.fetch_add(n, std::memory_order_relaxed);

    result<Value> reply = Problem{errc::store_unavailable, "not sent"};
    const bool grouped = n > 1 || !batch.front().args.notify.empty();
    if (!grouped) {
        // A lone check runs its algorithm's own script (one with webhook thresholds: lua/batch.lua,
        // which claims its crossings).
        const SingleCheck call(std::move(batch.front().args));
        reply = co_await node_.eval(script_for(call.check().algorithm), call, deadline);
    } else {
        // Written from the queued checks themselves: they stay in `batch` until the reply.
        const GroupedChecks call(std::views::transform(batch, &QueuedCheck::args));
        reply = co_await node_.eval(batch_script(), call, deadline);
    }
    --in_flight_;
    // One posted handler resumes every caller of the batch (a post per caller cost a
    // scheduler round and an allocation each): out of this coroutine, so each resumed check
    // runs from a plain handler, as a posted completion would.
    net::post(node_.executor(), [batch = std::move(batch), reply = std::move(reply), grouped]() mutable {
        complete_batch(batch, reply, grouped);
    });
    flush();
}

}  // namespace ratelimitd::store::redis
