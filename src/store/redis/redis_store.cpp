// RedisStore: a Store over one NodeClient, apply() coalesced through a BatchSender.
#include "ratelimitd/store/redis/redis_store.hpp"

#include "ratelimitd/store/redis/batch_args.hpp"
#include "ratelimitd/store/redis/flat_reply.hpp"
#include "ratelimitd/store/redis/reset_channel.hpp"
#include "ratelimitd/store/redis/verdict_reply.hpp"

#include <spdlog/spdlog.h>

#include <ranges>

namespace ratelimitd::store::redis {

namespace net = boost::asio;

RedisStore::RedisStore(net::any_io_executor ex, Endpoint endpoint, std::chrono::milliseconds timeout,
                       std::string instance_id, int connections, Coalescing coalescing,
                       std::shared_ptr<EndpointSource> source, StateLayout layout)
    : node_(ex, std::move(endpoint), timeout, connections, std::move(source)),
      batches_(node_, coalescing),
      coalesce_(coalescing.enabled),
      timeout_(timeout),
      members_(std::move(instance_id), layout) {}

RedisStore::~RedisStore() { stop(); }

void RedisStore::on_reconnected(const std::function<void()>& hook) { node_.on_reconnected(hook); }

void RedisStore::stop() {
    node_.stop();
    batches_.stop();
}

void RedisStore::retarget() { node_.retarget(); }

bool RedisStore::any_ready() const noexcept { return node_.any_ready(); }

std::string RedisStore::describe() const { return node_.describe(); }

net::awaitable<bool> RedisStore::ready() { co_return co_await node_.ready(); }

namespace {

// The verdict of a check's reply, with its lease (a concurrency policy), written into `out`:
// out of apply_into() so that its temporaries are not kept in apply_into's coroutine frame.
result<void> verdict_into(const result<Value>& reply, const policy::Policy& p, const std::string& lease,
                          check::Verdict& out) {
    if (!reply) return reply.error();
    auto read = parse_verdict_into(*reply, p, out);
    if (read) attach_lease(out, 0, p, lease);
    return read;
}

}  // namespace

net::awaitable<result<check::Verdict>> RedisStore::apply(const policy::Policy& p, std::string key,
                                                         std::uint32_t cost) {
    check::Verdict verdict;
    auto done = co_await apply_into(p, std::move(key), cost, verdict);
    if (!done) co_return done.error();
    co_return verdict;
}

// Kept small: its frame is taken per check (from the thread's FramePool, which keeps blocks
// up to 4 KiB). Whatever runs without suspending lives in plain functions, and the check is
// handed on by reference to functions that take it before they return.
net::awaitable<result<void>> RedisStore::apply_into(const policy::Policy& p, std::string key, std::uint32_t cost,
                                                    check::Verdict& out) {
    const auto deadline = clock::now() + timeout_;
    CheckArgs check = check_args(p, std::move(key), cost, members_);
    const std::string lease = check.member;
    const bool grouped = !coalesce_ && !check.notify.empty();
    // Not `c ? co_await a : co_await b`: GCC 12 destroys the result twice.
    result<Value> reply = Problem{errc::store_unavailable, "not sent"};
    // `check` stays in this frame until the reply: the queue takes it from here.
    if (coalesce_) reply = co_await batches_.call_held(check, deadline);
    else reply = co_await send_alone(std::move(check), deadline);
    if (grouped) reply = FlatReply(reply, 1).element(0, p.limit);
    co_return verdict_into(reply, p, lease, out);
}

net::awaitable<result<Value>> RedisStore::send_alone(CheckArgs&& check, clock::time_point deadline) {
    if (check.notify.empty()) {
        const Script& script = script_for(check.algorithm);
        return node_.eval_owned(script, SingleCheck(std::move(check)), deadline);
    }
    // Webhook thresholds are claimed by lua/batch.lua (a batch of one).
    return node_.eval_owned(batch_script(), BatchChecks(std::views::single(std::move(check))), deadline);
}

net::awaitable<result<check::Verdict>> RedisStore::apply_all(std::vector<LimitCheck> checks) {
    std::vector<CheckArgs> args;
    args.reserve(checks.size());
    std::vector<std::string> leases;
    for (const auto& c : checks) {
        args.push_back(limit_args(c, members_));
        leases.push_back(args.back().member);
    }
    const auto deadline = clock::now() + timeout_;
    const GroupedChecks call(std::move(args));
    auto reply = co_await node_.eval(multi_script(), call, deadline);
    if (!reply) co_return reply.error();
    auto verdict = layered_verdict(*reply, checks);
    // A refund gives units back as a reset does: other sidecars' denial caches must forget.
    for (std::size_t i = 0; verdict && i < checks.size(); ++i) {
        if (gives_back(checks[i])) co_await publish_reset(checks[i].key, deadline);
    }
    for (std::size_t i = 0; verdict && i < checks.size(); ++i) attach_lease(*verdict, i, *checks[i].policy, leases[i]);
    co_return verdict;
}

net::awaitable<result<check::Verdict>> RedisStore::release(const policy::Policy& p, std::string key,
                                                           std::string lease) {
    const SingleCheck call = release_call(p, std::move(key), std::move(lease));
    auto reply = co_await node_.eval(script_for(p.algorithm), call, clock::now() + timeout_);
    if (!reply) co_return reply.error();
    co_return parse_verdict(*reply, p);
}

net::awaitable<result<check::Verdict>> RedisStore::peek(const policy::Policy& p, std::string key) {
    const SingleCheck call(check_args(p, std::move(key), 1, members_), SingleMode::peek);
    auto reply = co_await node_.eval(script_for(p.algorithm), call, clock::now() + timeout_);
    if (!reply) co_return reply.error();
    co_return peek_verdict(*reply, p);
}

net::awaitable<result<bool>> RedisStore::reset(std::string key) {
    const auto deadline = clock::now() + timeout_;
    std::vector<std::string> del{std::string("DEL"), key};  // (g++ 12: no braced literals in co_await)
    auto reply = co_await node_.command(std::move(del), deadline);
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
    auto sent = co_await node_.command(std::move(publish), deadline);
    if (!sent || sent->type == Value::Type::error) {
        spdlog::warn("reset of {} not announced to the other sidecars: {}", key,
                     sent ? sent->str : sent.error().detail);
    }
}

}  // namespace ratelimitd::store::redis
