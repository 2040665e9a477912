// RedisStore: EVALSHA over this thread's pipelined connections, checks coalesced into batch
// calls; NOSCRIPT reloads invisibly.
#include "ratelimitd/store/redis/redis_store.hpp"

#include "ratelimitd/store/redis/cluster/key_slot.hpp"
#include "ratelimitd/store/redis/reset_channel.hpp"
#include "ratelimitd/store/redis/verdict_reply.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>

namespace ratelimitd::store::redis {

namespace net = boost::asio;

namespace {

template <class Handler, class Base>
struct WaiterFor final : Base {
    WaiterFor(net::any_io_executor ex, Handler&& h) : executor(std::move(ex)), handler(std::move(h)) {}
    void complete(result<Value> reply) override {
        auto ex = net::get_associated_executor(handler, executor);
        net::post(ex, [h = std::move(handler), r = std::move(reply)]() mutable { std::move(h)(std::move(r)); });
    }
    net::any_io_executor executor;
    Handler handler;
};

}  // namespace

RedisStore::RedisStore(net::any_io_executor ex, Endpoint endpoint, std::chrono::milliseconds timeout,
                       std::string instance_id, int connections, Coalescing coalescing,
                       std::shared_ptr<EndpointSource> source)
    : executor_(ex),
      probe_timer_(ex),
      endpoint_(std::move(endpoint)),
      source_(std::move(source)),
      timeout_(timeout),
      instance_id_(std::move(instance_id)),
      coalescing_(coalescing) {
    coalescing_.max_batch = std::max<std::size_t>(coalescing_.max_batch, 1);
    coalescing_.max_in_flight = std::max<std::size_t>(coalescing_.max_in_flight, 1);
    for (int i = 0; i < connections; ++i) {
        connections_.push_back(std::make_shared<Connection>(ex, endpoint_, source_));
        connections_.back()->start();
    }
}

RedisStore::~RedisStore() { stop(); }

void RedisStore::on_reconnected(const std::function<void()>& hook) {
    for (auto& c : connections_) c->on_reconnected(hook);
}

void RedisStore::stop() {
    stopped_ = true;
    probe_timer_.cancel();
    for (auto& c : connections_) c->stop();
    flush();  // fails the queued checks: nothing will send them now
}

bool RedisStore::any_ready() const noexcept {
    for (const auto& c : connections_) {
        if (c->ready()) return true;
    }
    return false;
}

std::string RedisStore::describe() const { return source_ ? source_->describe() : endpoint_.describe(); }

void RedisStore::retarget() {
    for (auto& c : connections_) c->retarget();
}

// Round-robin over ready connections; a connection still connecting queues commands in
// order behind its setup, so it is the fallback when none is ready yet.
Connection* RedisStore::pick() noexcept {
    const size_t n = connections_.size();
    for (size_t i = 0; i < n; ++i) {
        auto& c = connections_[(next_ + i) % n];
        if (c->ready()) {
            next_ = (next_ + i + 1) % n;
            return c.get();
        }
    }
    for (auto& c : connections_) {
        if (c->usable()) return c.get();
    }
    return nullptr;
}

net::awaitable<result<Value>> RedisStore::exec(Connection& c, std::vector<std::string> argv,
                                              Connection::clock::time_point deadline) {
    co_return co_await c.async_exec(std::move(argv), deadline, net::use_awaitable);
}

void RedisStore::record(const result<Value>& outcome) {
    const bool failed = !outcome && (outcome.error().code == errc::store_timeout ||
                                     outcome.error().code == errc::store_unavailable);
    if (!failed) {
        if (breaker_.on_success()) {
            breaker_open_ = false;
            spdlog::info("redis: {} answers again; circuit closed", describe());
        }
        return;
    }
    if (breaker_.on_failure()) {
        breaker_open_ = true;
        spdlog::warn("redis: {} keeps failing ({}); circuit open, checks answer by on_store_error "
                     "without waiting; probing every {} ms",
                     describe(), outcome.error().detail, breaker_.retry_interval().count());
        schedule_probe();
    }
}

// While the breaker is open, one PING per interval finds out when Redis is back.
void RedisStore::schedule_probe() {
    if (stopped_) return;
    probe_timer_.expires_after(breaker_.retry_interval());
    probe_timer_.async_wait([this](boost::system::error_code ec) {
        if (ec || stopped_) return;
        net::co_spawn(executor_, [this]() -> net::awaitable<void> {
            if (co_await ping()) {
                if (breaker_.on_success()) {
                    breaker_open_ = false;
                    spdlog::info("redis: {} answers again; circuit closed", describe());
                }
            } else {
                breaker_.on_failure();
                schedule_probe();
            }
        }, net::detached);
    });
}

net::awaitable<bool> RedisStore::ping() {
    Connection* conn = pick();
    if (conn == nullptr) co_return false;
    auto hold = conn->shared_from_this();
    std::vector<std::string> ping(1, std::string("PING"));
    auto reply = co_await exec(*conn, std::move(ping), Connection::clock::now() + timeout_);
    co_return reply.has_value() && reply->type == Value::Type::status && reply->str == "PONG";
}

void RedisStore::send_asking(Connection& c, Connection::clock::time_point deadline) {
    // Its +OK is not needed: an ASKING that failed makes the command after it answer MOVED.
    std::vector<std::string> asking(1, std::string("ASKING"));
    c.async_exec(std::move(asking), deadline, [](result<Value>) {});
}

net::awaitable<result<Value>> RedisStore::eval(const Script& script, std::vector<std::string> argv,
                                              Connection::clock::time_point deadline, bool asking) {
    if (!breaker_.allow()) {
        co_return Problem{errc::store_unavailable,
                          "circuit open: " + describe() + " failed repeatedly"};
    }
    // One deadline for the whole call, NOSCRIPT retry included.
    Connection* conn = pick();
    if (conn == nullptr) {
        result<Value> failure = Problem{errc::store_unavailable, "not connected to " + describe()};
        record(failure);
        co_return failure;
    }
    // Keep the connection alive across the suspension even if the pool were torn down.
    auto hold = conn->shared_from_this();

    argv.insert(argv.begin(), {std::string("EVALSHA"), script.sha1});
    if (asking) send_asking(*conn, deadline);
    auto reply = co_await exec(*conn, argv, deadline);
    record(reply);
    if (reply && reply->is_error() && reply->str.rfind("NOSCRIPT", 0) == 0) {
        // The script cache was emptied (restart, failover, SCRIPT FLUSH): EVAL runs the
        // script and caches it again, so later EVALSHAs find it.
        argv[0] = "EVAL";
        argv[1] = std::string(script.text);
        if (asking) send_asking(*conn, deadline);
        reply = co_await exec(*conn, std::move(argv), deadline);
        record(reply);
    }
    co_return reply;
}

net::awaitable<result<Value>> RedisStore::run_script(const policy::Policy& p, std::string key,
                                                     std::uint32_t cost, bool peek,
                                                     Connection::clock::time_point deadline, bool asking) {
    std::vector<std::string> argv;
    argv.reserve(10);
    argv.emplace_back("1");
    argv.push_back(std::move(key));
    argv.push_back(std::to_string(p.limit));
    argv.push_back(std::to_string(p.window.count()));
    argv.push_back(std::to_string(p.burst));
    argv.push_back(std::to_string(cost));
    argv.push_back(member_for(p));
    if (peek) argv.emplace_back("peek");
    co_return co_await eval(script_for(p.algorithm), std::move(argv), deadline, asking);
}

std::string RedisStore::member_for(const policy::Policy& p) {
    if (p.algorithm != policy::Algorithm::sliding_log) return {};
    return instance_id_ + ":" + std::to_string(++sequence_);
}

net::awaitable<result<Value>> RedisStore::layered_reply(const std::vector<LimitCheck>& checks,
                                                       clock::time_point deadline, bool asking) {
    // One EVALSHA of lua/multi.lua: N keys, six arguments per key (see the script).
    std::vector<std::string> argv;
    argv.reserve(1 + 7 * checks.size());
    argv.push_back(std::to_string(checks.size()));
    for (const auto& c : checks) argv.push_back(c.key);
    for (const auto& c : checks) {
        const policy::Policy& p = *c.policy;
        argv.emplace_back(policy::to_string(p.algorithm));
        argv.push_back(std::to_string(p.limit));
        argv.push_back(std::to_string(p.window.count()));
        argv.push_back(std::to_string(p.burst));
        argv.push_back(std::to_string(c.cost));
        argv.push_back(member_for(p));
    }
    co_return co_await eval(multi_script(), std::move(argv), deadline, asking);
}

result<check::Verdict> RedisStore::layered_verdict(const Value& reply, const std::vector<LimitCheck>& checks) {
    if (reply.is_error()) return Problem{errc::bad_script_reply, "redis error: " + reply.str};
    if (reply.type != Value::Type::array || reply.elements.size() != checks.size()) {
        return Problem{errc::bad_script_reply, "expected one reply per limit from lua/multi.lua"};
    }
    check::Verdict v;
    v.allowed = true;
    for (std::size_t i = 0; i < checks.size(); ++i) {
        auto one = parse_verdict(reply.elements[i], *checks[i].policy);
        if (!one) return one.error();
        v.allowed = v.allowed && one->allowed;
        v.windows.push_back(std::move(one->windows.front()));
    }
    return v;
}

net::awaitable<result<check::Verdict>> RedisStore::apply_all(std::vector<LimitCheck> checks) {
    auto reply = co_await layered_reply(checks, clock::now() + timeout_, false);
    if (!reply) co_return reply.error();
    co_return layered_verdict(*reply, checks);
}

net::awaitable<result<Value>> RedisStore::check_reply(const policy::Policy& p, std::string key,
                                                      std::uint32_t cost, clock::time_point deadline,
                                                      bool asking) {
    // Not `c ? co_await a : co_await b`: GCC 12 destroys the result twice.
    result<Value> reply = Problem{errc::store_unavailable, "not sent"};
    if (coalescing_.enabled && !asking) reply = co_await coalesce(p, std::move(key), cost, deadline);
    else reply = co_await run_script(p, std::move(key), cost, false, deadline, asking);
    co_return reply;
}

net::awaitable<result<check::Verdict>> RedisStore::apply(const policy::Policy& p, std::string key,
                                                         std::uint32_t cost) {
    // check_reply() inlined: one coroutine frame less per check on the hot path.
    const auto deadline = clock::now() + timeout_;
    result<Value> reply = Problem{errc::store_unavailable, "not sent"};
    if (coalescing_.enabled) reply = co_await coalesce(p, std::move(key), cost, deadline);
    else reply = co_await run_script(p, std::move(key), cost, false, deadline, false);
    if (!reply) co_return reply.error();
    co_return parse_verdict(*reply, p);
}

// ---- coalescing -------------------------------------------------------------------------------

net::awaitable<result<Value>> RedisStore::coalesce(const policy::Policy& p, std::string key,
                                                  std::uint32_t cost, Connection::clock::time_point deadline) {
    if (!breaker_.allow()) {
        co_return Problem{errc::store_unavailable, "circuit open: " + describe() + " failed repeatedly"};
    }
    const int slot = coalescing_.one_slot_per_batch ? cluster::key_slot(key) : -1;
    QueuedCheck check{p.algorithm, p.limit, p.window.count(), p.burst, cost, std::move(key), member_for(p),
                      deadline, slot, {}};
    co_return co_await net::async_initiate<decltype(net::use_awaitable), void(result<Value>)>(
        [this](auto handler, QueuedCheck queued) {
            queued.done = std::make_unique<WaiterFor<decltype(handler), Waiter>>(executor_, std::move(handler));
            enqueue(std::move(queued));
        },
        net::use_awaitable, std::move(check));
}

void RedisStore::enqueue(QueuedCheck check) {
    queue_.push_back(std::move(check));
    // Flush once the handlers already runnable have run: checks arriving in the same turn
    // of the event loop leave together even while few calls are out.
    if (!flush_posted_) {
        flush_posted_ = true;
        net::post(executor_, [this] {
            flush_posted_ = false;
            flush();
        });
    }
}

void RedisStore::flush() {
    if (stopped_) {
        for (auto& check : queue_) {
            check.done->complete(Problem{errc::store_unavailable, "the redis store is stopping"});
        }
        queue_.clear();
        return;
    }
    while (!queue_.empty() && in_flight_ < coalescing_.max_in_flight) {
        std::vector<QueuedCheck> batch;
        if (coalescing_.one_slot_per_batch) {
            // The first check's slot leaves; checks of other slots keep their order.
            const int slot = queue_.front().slot;
            for (auto it = queue_.begin(); it != queue_.end() && batch.size() < coalescing_.max_batch;) {
                if (it->slot == slot) {
                    batch.push_back(std::move(*it));
                    it = queue_.erase(it);
                } else {
                    ++it;
                }
            }
        } else {
            const auto n = static_cast<std::ptrdiff_t>(std::min(queue_.size(), coalescing_.max_batch));
            batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + n));
            queue_.erase(queue_.begin(), queue_.begin() + n);
        }
        ++in_flight_;
        net::co_spawn(executor_, send_batch(std::move(batch)), net::detached);
    }
}

net::awaitable<void> RedisStore::send_batch(std::vector<QueuedCheck> batch) {
    // The oldest check's deadline: no check waits past its own, queueing included.
    const auto deadline = batch.front().deadline;
    const std::size_t n = batch.size();
    std::vector<std::string> argv;
    argv.reserve(1 + 7 * n);
    argv.push_back(std::to_string(n));
    for (auto& c : batch) argv.push_back(std::move(c.key));
    for (auto& c : batch) {
        // A lone check runs its algorithm's own script (ARGV without the algorithm name).
        if (n > 1) argv.emplace_back(policy::to_string(c.algorithm));
        argv.push_back(std::to_string(c.limit));
        argv.push_back(std::to_string(c.window_ms));
        argv.push_back(std::to_string(c.burst));
        argv.push_back(std::to_string(c.cost));
        argv.push_back(std::move(c.member));
    }
    const Script& script = n > 1 ? batch_script() : script_for(batch.front().algorithm);
    batches_sent_.fetch_add(1, std::memory_order_relaxed);
    checks_batched_.fetch_add(n, std::memory_order_relaxed);

    auto reply = co_await eval(script, std::move(argv), deadline);
    --in_flight_;

    // One reply per check: each waiter gets its own element (or the shared failure).
    auto reply_for = [&](std::size_t i) -> result<Value> {
        if (!reply) return reply.error();
        if (n == 1 || reply->is_error()) return *reply;
        if (reply->type != Value::Type::array || reply->elements.size() != n) {
            return Problem{errc::bad_script_reply, "expected one reply per check from lua/batch.lua"};
        }
        // A check's own error (its pcall in lua/batch.lua) is no redirect of the call.
        if (reply->elements[i].is_error()) {
            return Problem{errc::bad_script_reply, "redis error: " + reply->elements[i].str};
        }
        return std::move(reply->elements[i]);
    };
    for (std::size_t i = 0; i < n; ++i) batch[i].done->complete(reply_for(i));
    flush();
}

net::awaitable<result<Value>> RedisStore::peek_reply(const policy::Policy& p, std::string key,
                                                    clock::time_point deadline, bool asking) {
    co_return co_await run_script(p, std::move(key), 1, true, deadline, asking);
}

result<check::Verdict> RedisStore::peek_verdict(const Value& reply, const policy::Policy& p) {
    auto verdict = parse_verdict(reply, p);
    if (verdict) {
        for (auto& w : verdict->windows) w.allowed = w.remaining >= 1;
        verdict->allowed = verdict->windows.front().allowed;
    }
    return verdict;
}

net::awaitable<result<check::Verdict>> RedisStore::peek(const policy::Policy& p, std::string key) {
    auto reply = co_await peek_reply(p, std::move(key), clock::now() + timeout_, false);
    if (!reply) co_return reply.error();
    co_return peek_verdict(*reply, p);
}

net::awaitable<result<Value>> RedisStore::command(std::vector<std::string> argv, clock::time_point deadline,
                                                  bool asking) {
    if (!breaker_.allow()) {
        co_return Problem{errc::store_unavailable, "circuit open: " + describe() + " failed repeatedly"};
    }
    Connection* conn = pick();
    if (conn == nullptr) co_return Problem{errc::store_unavailable, "not connected to " + describe()};
    auto hold = conn->shared_from_this();
    if (asking) send_asking(*conn, deadline);
    auto reply = co_await exec(*conn, std::move(argv), deadline);
    record(reply);
    co_return reply;
}

result<bool> RedisStore::reset_result(const Value& reply) {
    if (reply.type != Value::Type::integer) return Problem{errc::bad_script_reply, "DEL: " + reply.str};
    return reply.integer > 0;
}

net::awaitable<result<bool>> RedisStore::reset(std::string key) {
    const auto deadline = clock::now() + timeout_;
    std::vector<std::string> del{std::string("DEL"), key};  // (g++ 12: no braced literals in co_await)
    auto reply = co_await command(std::move(del), deadline);
    if (!reply) co_return reply.error();
    auto forgot = reset_result(*reply);
    // After the DEL: a sidecar that drops its cached denial on this message and asks again
    // finds the key gone. Announced even when the key had just expired (cheap, and a cache
    // entry may outlive it by a clock tick).
    if (forgot.has_value()) co_await publish_reset(key, deadline);
    co_return forgot;
}

net::awaitable<void> RedisStore::publish_reset(const std::string& key, clock::time_point deadline) {
    std::vector<std::string> publish{std::string("PUBLISH"), reset_channel_of_key(key), key};
    auto sent = co_await command(std::move(publish), deadline);
    if (!sent || sent->type == Value::Type::error) {
        spdlog::warn("reset of {} not announced to the other sidecars: {}", key,
                     sent ? sent->str : sent.error().detail);
    }
}

net::awaitable<bool> RedisStore::ready() {
    if (breaker_.is_open() || !any_ready()) co_return false;
    co_return co_await ping();
}

}  // namespace ratelimitd::store::redis
