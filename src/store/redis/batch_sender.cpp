// BatchSender: posts a flush per turn of the event loop, sends batches, hands out replies.
#include "ratelimitd/store/redis/batch_sender.hpp"

#include "ratelimitd/store/redis/batch_args.hpp"
#include "ratelimitd/store/redis/flat_reply.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <ranges>
#include <type_traits>
#include <utility>

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

/// Hands each check of an answered batch its own reply: a lone check's is its script's, whole;
/// a batch's is shared out of lua/batch.lua's flat reply, each rebuilt with its policy's limit.
void complete_batch(std::vector<QueuedCheck>& batch, result<Value>& reply, bool grouped) {
    if (!grouped) {
        batch.front().done->complete_here(std::move(reply));
        return;
    }
    const FlatReply flat(reply, batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) batch[i].done->complete_here(flat.element(i, batch[i].args.limit));
}

}  // namespace

/// One batch on its way: the checks taken from the queue, which are also the script's
/// arguments, written into the command from where they are (nothing is copied for the call,
/// nor kept encoded for a NOSCRIPT retry), and their policies' groups (lua/batch.lua receives
/// each policy's numbers once), kept with the batch so that their vectors are reused too.
class BatchSender::SentBatch final : public ScriptArgs {
public:
    std::vector<QueuedCheck> checks;

    // The checks seen as lua/batch.lua's arguments, without copying them.
    [[nodiscard]] auto args() const { return std::views::transform(checks, &QueuedCheck::args); }

    /// A lone check runs its algorithm's own script (one with webhook thresholds:
    /// lua/batch.lua, which claims its crossings).
    [[nodiscard]] bool grouped() const noexcept { return checks.size() > 1 || !checks.front().args.notify.empty(); }
    [[nodiscard]] const Script& script() const {
        return grouped() ? batch_script() : script_for(checks.front().args.algorithm);
    }
    /// Groups the checks by their policies' numbers: once, before the call is written.
    void group() {
        if (grouped()) groups_.assign(args());
    }

    [[nodiscard]] std::size_t count() const override {
        return grouped() ? batch_arg_count(args(), groups_) : single_check_count(SingleMode::check);
    }
    void append_to(std::string& out) const override {
        if (grouped()) append_batch(out, args(), groups_);
        else append_single_check(out, checks.front().args, SingleMode::check);
    }
    [[nodiscard]] bool flat_reply() const override { return grouped(); }

private:
    PolicyGroups groups_;
};

BatchSender::BatchSender(NodeClient& node, Coalescing coalescing) : node_(node), queue_(coalescing) {}

BatchSender::~BatchSender() = default;

template <class Handler>
void BatchSender::wait_queued(Handler&& handler, QueuedCheck&& check) {
    auto waiter = std::make_unique<WaiterFor<std::decay_t<Handler>>>(node_.executor(), std::forward<Handler>(handler));
    if (!node_.allows()) {
        waiter->complete(node_.circuit_open());
        return;
    }
    check.done = std::move(waiter);
    enqueue(std::move(check));
}

// Not a coroutine: the awaitable of the initiation is returned as it is, one coroutine frame
// per check fewer. The check is moved into the initiation's frame, then by reference (Asio
// hands the initiation its arguments as rvalues) into the queue: no move more per layer.
net::awaitable<result<Value>> BatchSender::call(CheckArgs&& check, NodeClient::clock::time_point deadline) {
    return net::async_initiate<decltype(net::use_awaitable), void(result<Value>)>(
        [this](auto handler, QueuedCheck&& q) { wait_queued(std::move(handler), std::move(q)); }, net::use_awaitable,
        QueuedCheck{std::move(check), deadline, nullptr});
}

// The caller's frame holds `check` until this completes: taken by reference, moved once.
net::awaitable<result<Value>> BatchSender::call_held(CheckArgs& check, NodeClient::clock::time_point deadline) {
    return net::async_initiate<decltype(net::use_awaitable), void(result<Value>)>(
        [this, &check, deadline](auto handler) {
            wait_queued(std::move(handler), QueuedCheck{std::move(check), deadline, nullptr});
        },
        net::use_awaitable);
}

void BatchSender::stop() {
    stopped_ = true;
    flush();
}

void BatchSender::enqueue(QueuedCheck&& check) {
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
    for (;;) {
        std::unique_ptr<SentBatch> batch;
        if (spare_.empty()) {
            batch = std::make_unique<SentBatch>();
        } else {
            batch = std::move(spare_.back());
            spare_.pop_back();
        }
        if (!queue_.take(in_flight_, batch->checks)) {
            spare_.push_back(std::move(batch));
            return;
        }
        ++in_flight_;
        send(std::move(batch));
    }
}

void BatchSender::send(std::unique_ptr<SentBatch> batch) {
    batches_sent_.fetch_add(1, std::memory_order_relaxed);
    checks_batched_.fetch_add(batch->checks.size(), std::memory_order_relaxed);
    const auto deadline = batch_deadline(batch->checks);
    // The batch is both the arguments and what the reply's handler holds: it stays put (on the
    // heap) while the command is written and, for NOSCRIPT, written again.
    SentBatch& call = *batch;
    call.group();
    node_.async_eval(call.script(), call, deadline, false,
                     [this, batch = std::move(batch)](result<Value> reply) mutable {
                         on_reply(std::move(batch), std::move(reply));
                     });
}

void BatchSender::on_reply(std::unique_ptr<SentBatch> batch, result<Value> reply) {
    --in_flight_;
    // The checks queued meanwhile leave first; then the callers resume, each from this
    // handler (a reply's handler: posted, never inside the reply loop).
    flush();
    complete_batch(batch->checks, reply, batch->grouped());
    batch->checks.clear();
    if (spare_.size() < queue_.limits().max_in_flight) spare_.push_back(std::move(batch));
}

}  // namespace ratelimitd::store::redis
