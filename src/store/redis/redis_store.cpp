// RedisStore: EVALSHA over this thread's pipelined connections; NOSCRIPT reloads invisibly.
#include "ratelimitd/store/redis/redis_store.hpp"

#include "ratelimitd/store/redis/verdict_reply.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

namespace ratelimitd::store::redis {

namespace net = boost::asio;

RedisStore::RedisStore(net::any_io_executor ex, Endpoint endpoint, std::chrono::milliseconds timeout,
                       std::string instance_id, int connections)
    : executor_(ex),
      probe_timer_(ex),
      endpoint_(std::move(endpoint)),
      timeout_(timeout),
      instance_id_(std::move(instance_id)) {
    for (int i = 0; i < connections; ++i) {
        connections_.push_back(std::make_shared<Connection>(ex, endpoint_));
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
}

bool RedisStore::any_ready() const noexcept {
    for (const auto& c : connections_) {
        if (c->ready()) return true;
    }
    return false;
}

std::string RedisStore::describe() const { return endpoint_.describe(); }

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
            spdlog::info("redis: {} answers again; circuit closed", endpoint_.describe());
        }
        return;
    }
    if (breaker_.on_failure()) {
        breaker_open_ = true;
        spdlog::warn("redis: {} keeps failing ({}); circuit open, checks answer by on_store_error "
                     "without waiting; probing every {} ms",
                     endpoint_.describe(), outcome.error().detail, breaker_.retry_interval().count());
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
                    spdlog::info("redis: {} answers again; circuit closed", endpoint_.describe());
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

net::awaitable<result<Value>> RedisStore::eval(const Script& script, std::vector<std::string> argv) {
    if (!breaker_.allow()) {
        co_return Problem{errc::store_unavailable,
                          "circuit open: " + endpoint_.describe() + " failed repeatedly"};
    }
    // One deadline for the whole check, NOSCRIPT retry included.
    const auto deadline = Connection::clock::now() + timeout_;
    Connection* conn = pick();
    if (conn == nullptr) {
        result<Value> failure = Problem{errc::store_unavailable, "not connected to " + endpoint_.describe()};
        record(failure);
        co_return failure;
    }
    // Keep the connection alive across the suspension even if the pool were torn down.
    auto hold = conn->shared_from_this();

    argv.insert(argv.begin(), {std::string("EVALSHA"), script.sha1});
    auto reply = co_await exec(*conn, argv, deadline);
    record(reply);
    if (reply && reply->is_error() && reply->str.rfind("NOSCRIPT", 0) == 0) {
        // The script cache was emptied (restart, failover, SCRIPT FLUSH): EVAL runs the
        // script and caches it again, so later EVALSHAs find it.
        argv[0] = "EVAL";
        argv[1] = std::string(script.text);
        reply = co_await exec(*conn, std::move(argv), deadline);
        record(reply);
    }
    co_return reply;
}

net::awaitable<result<Value>> RedisStore::run_script(const policy::Policy& p, std::string key,
                                                     std::uint32_t cost, bool peek) {
    std::vector<std::string> argv;
    argv.reserve(10);
    argv.emplace_back("1");
    argv.push_back(std::move(key));
    argv.push_back(std::to_string(p.limit));
    argv.push_back(std::to_string(p.window.count()));
    argv.push_back(std::to_string(p.burst));
    argv.push_back(std::to_string(cost));
    argv.push_back(instance_id_ + ":" + std::to_string(++sequence_));
    if (peek) argv.emplace_back("peek");
    co_return co_await eval(script_for(p.algorithm), std::move(argv));
}

net::awaitable<result<check::Verdict>> RedisStore::apply_all(std::vector<LimitCheck> checks) {
    // One EVALSHA of lua/multi.lua: N keys, six arguments per key (see the script).
    std::vector<std::string> argv;
    argv.reserve(1 + 7 * checks.size());
    argv.push_back(std::to_string(checks.size()));
    for (auto& c : checks) argv.push_back(std::move(c.key));
    for (const auto& c : checks) {
        const policy::Policy& p = *c.policy;
        argv.emplace_back(policy::to_string(p.algorithm));
        argv.push_back(std::to_string(p.limit));
        argv.push_back(std::to_string(p.window.count()));
        argv.push_back(std::to_string(p.burst));
        argv.push_back(std::to_string(c.cost));
        argv.push_back(instance_id_ + ":" + std::to_string(++sequence_));
    }
    auto reply = co_await eval(multi_script(), std::move(argv));
    if (!reply) co_return reply.error();
    if (reply->is_error()) co_return Problem{errc::bad_script_reply, "redis error: " + reply->str};
    if (reply->type != Value::Type::array || reply->elements.size() != checks.size()) {
        co_return Problem{errc::bad_script_reply, "expected one reply per limit from lua/multi.lua"};
    }
    check::Verdict v;
    v.allowed = true;
    for (std::size_t i = 0; i < checks.size(); ++i) {
        auto one = parse_verdict(reply->elements[i], *checks[i].policy);
        if (!one) co_return one.error();
        v.allowed = v.allowed && one->allowed;
        v.windows.push_back(std::move(one->windows.front()));
    }
    co_return v;
}

net::awaitable<result<check::Verdict>> RedisStore::apply(const policy::Policy& p, std::string key,
                                                         std::uint32_t cost) {
    auto reply = co_await run_script(p, std::move(key), cost, false);
    if (!reply) co_return reply.error();
    co_return parse_verdict(*reply, p);
}

net::awaitable<result<check::Verdict>> RedisStore::peek(const policy::Policy& p, std::string key) {
    auto reply = co_await run_script(p, std::move(key), 1, true);
    if (!reply) co_return reply.error();
    auto verdict = parse_verdict(*reply, p);
    if (verdict) {
        for (auto& w : verdict->windows) w.allowed = w.remaining >= 1;
        verdict->allowed = verdict->windows.front().allowed;
    }
    co_return verdict;
}

net::awaitable<result<Value>> RedisStore::command(std::vector<std::string> argv) {
    if (!breaker_.allow()) {
        co_return Problem{errc::store_unavailable, "circuit open: " + endpoint_.describe() + " failed repeatedly"};
    }
    Connection* conn = pick();
    if (conn == nullptr) co_return Problem{errc::store_unavailable, "not connected to " + endpoint_.describe()};
    auto hold = conn->shared_from_this();
    auto reply = co_await exec(*conn, std::move(argv), Connection::clock::now() + timeout_);
    record(reply);
    co_return reply;
}

net::awaitable<result<bool>> RedisStore::reset(std::string key) {
    std::vector<std::string> argv;
    argv.emplace_back("DEL");
    argv.push_back(std::move(key));
    auto reply = co_await command(std::move(argv));
    if (!reply) co_return reply.error();
    if (reply->type != Value::Type::integer) co_return Problem{errc::bad_script_reply, "DEL: " + reply->str};
    co_return reply->integer > 0;
}

net::awaitable<bool> RedisStore::ready() {
    if (breaker_.is_open() || !any_ready()) co_return false;
    co_return co_await ping();
}

}  // namespace ratelimitd::store::redis
