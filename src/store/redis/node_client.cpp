// NodeClient: the pool, the breaker and its probe, EVALSHA with EVAL after NOSCRIPT, ASKING.
#include "ratelimitd/store/redis/node_client.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

namespace ratelimitd::store::redis {

namespace net = boost::asio;

NodeClient::NodeClient(net::any_io_executor ex, Endpoint endpoint, std::chrono::milliseconds timeout,
                       int connections, std::shared_ptr<EndpointSource> source)
    : executor_(ex), probe_timer_(ex), endpoint_(std::move(endpoint)), source_(std::move(source)), timeout_(timeout) {
    for (int i = 0; i < connections; ++i) {
        connections_.push_back(std::make_shared<Connection>(ex, endpoint_, source_));
        connections_.back()->start();
    }
}

NodeClient::~NodeClient() { stop(); }

void NodeClient::on_reconnected(const std::function<void()>& hook) {
    for (auto& c : connections_) c->on_reconnected(hook);
}

void NodeClient::stop() {
    stopped_ = true;
    probe_timer_.cancel();
    for (auto& c : connections_) c->stop();
}

void NodeClient::retarget() {
    for (auto& c : connections_) c->retarget();
}

bool NodeClient::any_ready() const noexcept {
    for (const auto& c : connections_) {
        if (c->ready()) return true;
    }
    return false;
}

std::string NodeClient::describe() const { return source_ ? source_->describe() : endpoint_.describe(); }

Problem NodeClient::circuit_open() const {
    return Problem{errc::store_unavailable, "circuit open: " + describe() + " failed repeatedly"};
}

// Round-robin over ready connections; a connection still connecting queues commands in
// order behind its setup, so it is the fallback when none is ready yet.
Connection* NodeClient::pick() noexcept {
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

void NodeClient::close_circuit() {
    if (breaker_.on_success()) {
        breaker_open_ = false;
        spdlog::info("redis: {} answers again; circuit closed", describe());
    }
}

void NodeClient::record(const result<Value>& outcome) {
    const bool failed = !outcome && (outcome.error().code == errc::store_timeout ||
                                     outcome.error().code == errc::store_unavailable);
    if (!failed) {
        close_circuit();
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
void NodeClient::schedule_probe() {
    if (stopped_) return;
    probe_timer_.expires_after(breaker_.retry_interval());
    probe_timer_.async_wait([this](boost::system::error_code ec) {
        if (ec || stopped_) return;
        net::co_spawn(executor_, [this]() -> net::awaitable<void> {
            if (co_await ping()) {
                close_circuit();
            } else {
                breaker_.on_failure();
                schedule_probe();
            }
        }, net::detached);
    });
}

net::awaitable<bool> NodeClient::ping() {
    Connection* conn = pick();
    if (conn == nullptr) co_return false;
    auto hold = conn->shared_from_this();
    std::string ping;
    append_command(ping, {"PING"});
    auto reply = co_await conn->async_exec(std::move(ping), clock::now() + timeout_, net::use_awaitable);
    co_return reply.has_value() && reply->type == Value::Type::status && reply->str == "PONG";
}

net::awaitable<bool> NodeClient::ready() {
    if (breaker_.is_open() || !any_ready()) co_return false;
    co_return co_await ping();
}

void NodeClient::send_asking(Connection& c, clock::time_point deadline) {
    // Its +OK is not needed: an ASKING that failed makes the command after it answer MOVED.
    std::string asking;
    append_command(asking, {"ASKING"});
    c.async_exec(std::move(asking), deadline, [](result<Value>) {});
}

namespace detail {

void ScriptCall::operator()(std::string& out) const {
    append_array_header(out, 2 + args->count());
    append_bulk(out, verb);
    append_bulk(out, name);
    args->append_to(out);
}

bool is_noscript(const result<Value>& reply) noexcept {
    return reply && reply->is_error() && reply->str.rfind("NOSCRIPT", 0) == 0;
}

}  // namespace detail

result<std::shared_ptr<Connection>> NodeClient::connection_for_script() {
    if (!breaker_.allow()) return circuit_open();
    Connection* conn = pick();
    if (conn == nullptr) {
        result<Value> failure = Problem{errc::store_unavailable, "not connected to " + describe()};
        record(failure);
        return failure.error();
    }
    return conn->shared_from_this();
}

net::awaitable<result<Value>> NodeClient::command(std::vector<std::string> argv, clock::time_point deadline,
                                                  bool asking) {
    if (!breaker_.allow()) co_return circuit_open();
    Connection* conn = pick();
    if (conn == nullptr) co_return Problem{errc::store_unavailable, "not connected to " + describe()};
    auto hold = conn->shared_from_this();
    std::string wire;
    append_command(wire, {}, argv);
    if (asking) send_asking(*conn, deadline);
    auto reply = co_await conn->async_exec(std::move(wire), deadline, net::use_awaitable);
    record(reply);
    co_return reply;
}

}  // namespace ratelimitd::store::redis
