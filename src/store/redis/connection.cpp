// Connection: hiredis's async API hooked into Asio, with per-command deadlines and reconnect.
#include "ratelimitd/store/redis/connection.hpp"

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/container/small_vector.hpp>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <spdlog/spdlog.h>

#include <random>

namespace ratelimitd::store::redis {

namespace net = boost::asio;
using descriptor = net::posix::stream_descriptor;

namespace {

constexpr std::chrono::milliseconds connect_timeout{1000};
constexpr std::chrono::milliseconds first_backoff{50};
constexpr std::chrono::milliseconds max_backoff{500};  // back within ~0.75 s of a restart
// A server that has answered nothing for this long while a command timed out is treated as
// gone: the connection is dropped and made again, so a hung server does not collect an
// ever-growing queue of commands nobody waits for.
constexpr std::chrono::milliseconds silence_limit{1000};
// A node that stays down is retried every max_backoff by every connection of every thread;
// one line per this interval per connection says so without flooding the log.
constexpr std::chrono::seconds failure_report_interval{30};

/// The five event hooks of hiredis (the shape of its adapters/*.h) on an Asio descriptor.
/// Kept alive by the waits in flight and by `self_`, which hiredis's cleanup hook drops.
class AsioEvents : public std::enable_shared_from_this<AsioEvents> {
public:
    AsioEvents(const net::any_io_executor& ex, redisAsyncContext* ac) : fd_(ex, ac->c.fd), ac_(ac) {}

    static void attach(const net::any_io_executor& ex, redisAsyncContext* ac) {
        auto events = std::make_shared<AsioEvents>(ex, ac);
        events->self_ = events;
        ac->ev.data = events.get();
        ac->ev.addRead = [](void* d) { static_cast<AsioEvents*>(d)->start(true); };
        ac->ev.delRead = [](void* d) { static_cast<AsioEvents*>(d)->reading_ = false; };
        ac->ev.addWrite = [](void* d) { static_cast<AsioEvents*>(d)->start(false); };
        ac->ev.delWrite = [](void* d) { static_cast<AsioEvents*>(d)->writing_ = false; };
        ac->ev.cleanup = [](void* d) { static_cast<AsioEvents*>(d)->cleanup(); };
    }

private:
    void start(bool read) {
        (read ? reading_ : writing_) = true;
        bool& armed = read ? read_armed_ : write_armed_;
        if (armed || !alive_) return;
        armed = true;
        fd_.async_wait(read ? descriptor::wait_read : descriptor::wait_write,
                       [self = shared_from_this(), read](boost::system::error_code ec) {
                           self->on_ready(read, ec);
                       });
    }

    void on_ready(bool read, boost::system::error_code ec) {
        (read ? read_armed_ : write_armed_) = false;
        bool& wanted = read ? reading_ : writing_;
        if (ec || !alive_ || !wanted) return;
        // Either call may free the context, which runs cleanup() before it returns.
        if (read) redisAsyncHandleRead(ac_);
        else redisAsyncHandleWrite(ac_);
        if (alive_ && wanted) start(read);
    }

    void cleanup() {
        auto keep = std::move(self_);  // may be the last owner: destroyed when this returns
        alive_ = false;
        reading_ = writing_ = false;
        boost::system::error_code ignored;
        fd_.cancel(ignored);
        fd_.release();  // hiredis closes the fd itself
    }

    descriptor fd_;
    redisAsyncContext* ac_;
    std::shared_ptr<AsioEvents> self_;
    bool reading_ = false;
    bool writing_ = false;
    bool read_armed_ = false;
    bool write_armed_ = false;
    bool alive_ = true;
};

/// What hiredis carries as privdata for one command: keeps the Pending alive until hiredis
/// calls back (with a reply, or with nullptr when the context goes away).
struct Ticket {
    std::shared_ptr<detail::Pending> pending;
    Connection* owner;
};

std::chrono::milliseconds with_jitter(std::chrono::milliseconds d) {
    static thread_local std::minstd_rand rng{std::random_device{}()};
    std::uniform_int_distribution<long> spread(0, d.count() / 2);
    return d + std::chrono::milliseconds(spread(rng));
}

}  // namespace

Connection::Connection(net::any_io_executor ex, Endpoint endpoint, std::shared_ptr<EndpointSource> source)
    : executor_(std::move(ex)),
      endpoint_(std::move(endpoint)),
      source_(std::move(source)),
      reconnect_timer_(executor_),
      connect_timer_(executor_) {}

Connection::~Connection() { stop(); }

void Connection::start() { connect(); }

void Connection::stop() {
    stopped_ = true;
    reconnect_timer_.cancel();
    connect_timer_.cancel();
    teardown(nullptr);
}

void Connection::retarget() {
    if (stopped_ || !source_) return;
    auto current = source_->current();
    if (ctx_ != nullptr && current && current->host == endpoint_.host && current->port == endpoint_.port) return;
    if (ctx_ != nullptr) teardown("the primary moved");
    backoff_ = std::chrono::milliseconds{0};
    reconnect_timer_.cancel();
    connect();
}

void Connection::connect() {
    if (stopped_ || ctx_ != nullptr) return;
    if (source_) {
        auto current = source_->current();
        if (!current) {
            schedule_reconnect();  // no primary known yet: commands fail fast meanwhile
            return;
        }
        endpoint_ = std::move(*current);
    }
    redisAsyncContext* ac = redisAsyncConnect(endpoint_.host.c_str(), endpoint_.port);
    if (ac == nullptr) {
        spdlog::error("redis: cannot allocate a connection to {}", endpoint_.describe());
        schedule_reconnect();
        return;
    }
    if (ac->err) {
        report_failed_attempt(spdlog::level::warn, std::string("connect failed: ") + ac->errstr);
        redisAsyncFree(ac);
        schedule_reconnect();
        return;
    }
    ctx_ = ac;
    ac->data = this;
    last_reply_ = clock::now();
    AsioEvents::attach(executor_, ac);
    redisAsyncSetConnectCallback(ac, &Connection::on_connect);  // arms the first write wait
    redisAsyncSetDisconnectCallback(ac, &Connection::on_disconnect);
    send_setup();

    // A connect that neither succeeds nor fails (a black-holed address) is abandoned.
    connect_timer_.expires_after(connect_timeout);
    connect_timer_.async_wait([self = weak_from_this(), ac](boost::system::error_code ec) {
        auto c = self.lock();
        if (ec || !c || c->ctx_ != ac || c->ready_) return;
        c->report_failed_attempt(spdlog::level::warn, "connect timed out");
        c->teardown("connect timed out");
    });
}

// AUTH, SELECT and SCRIPT LOAD go first on every new connection; Redis runs commands in
// order, so checks queued behind them never meet an unloaded script.
void Connection::send_setup() {
    std::vector<std::vector<std::string>> setup;
    if (endpoint_.password) {
        if (endpoint_.username) setup.push_back({"AUTH", *endpoint_.username, *endpoint_.password});
        else setup.push_back({"AUTH", *endpoint_.password});
    }
    if (endpoint_.db != 0) setup.push_back({"SELECT", std::to_string(endpoint_.db)});
    for (const auto& s : scripts()) setup.push_back({"SCRIPT", "LOAD", std::string(s.text)});

    setup_pending_ = static_cast<int>(setup.size());
    for (const auto& argv : setup) {
        std::vector<const char*> args;
        std::vector<size_t> lens;
        for (const auto& a : argv) {
            args.push_back(a.data());
            lens.push_back(a.size());
        }
        redisAsyncCommandArgv(ctx_, &Connection::on_setup_reply, nullptr,
                              static_cast<int>(args.size()), args.data(), lens.data());
    }
}

void Connection::on_setup_reply(redisAsyncContext* ac, void* reply, void*) {
    auto* self = static_cast<Connection*>(ac->data);
    if (self == nullptr || self->ctx_ != ac) return;
    auto* r = static_cast<redisReply*>(reply);
    if (r == nullptr) return;  // the context is going away; on_disconnect handles it
    if (r->type == REDIS_REPLY_ERROR) {
        // Wrong password or db: retrying soon will not help, but the operator may fix Redis.
        self->report_failed_attempt(spdlog::level::err, "setting up failed: " + std::string(r->str, r->len));
        self->setup_pending_ = -1;
        net::post(self->executor_, [w = self->weak_from_this(), ac] {
            if (auto c = w.lock(); c && c->ctx_ == ac) c->teardown("setup failed");
        });
        return;
    }
    if (self->setup_pending_ > 0 && --self->setup_pending_ == 0) {
        self->ready_ = true;
        self->backoff_ = std::chrono::milliseconds{0};
        self->connect_timer_.cancel();
        self->last_reply_ = clock::now();
        if (self->failed_attempts_ > 0) {
            spdlog::info("redis: connected to {}, scripts loaded (after {} failed attempts)",
                         self->endpoint_.describe(), self->failed_attempts_);
        } else {
            spdlog::info("redis: connected to {}, scripts loaded", self->endpoint_.describe());
        }
        self->failed_attempts_ = 0;
        if (self->was_ready_ && self->on_reconnected_) self->on_reconnected_();
        self->was_ready_ = true;
    }
}

void Connection::on_connect(const redisAsyncContext* ac, int status) {
    auto* self = static_cast<Connection*>(ac->data);
    if (self == nullptr || self->ctx_ != ac) return;
    if (status != REDIS_OK) {
        // hiredis frees the context right after this callback.
        self->report_failed_attempt(spdlog::level::warn, std::string("connect failed: ") + ac->errstr);
        self->ctx_ = nullptr;
        self->ready_ = false;
        self->schedule_reconnect();
    }
}

void Connection::on_disconnect(const redisAsyncContext* ac, int status) {
    auto* self = static_cast<Connection*>(ac->data);
    if (self == nullptr || self->ctx_ != ac) return;  // we freed it ourselves
    if (status != REDIS_OK) {
        spdlog::warn("redis: connection to {} lost: {}", self->endpoint_.describe(), ac->errstr);
    }
    self->ctx_ = nullptr;
    self->ready_ = false;
    self->schedule_reconnect();
}

void Connection::teardown(const char* why) {
    redisAsyncContext* ac = ctx_;
    if (ac == nullptr) return;
    // A connection that never got set up was already reported as a failed attempt.
    if (why != nullptr) {
        spdlog::log(setup_pending_ < 0 || !ready_ ? spdlog::level::debug : spdlog::level::warn,
                    "redis: dropping connection to {}: {}", endpoint_.describe(), why);
    }
    ctx_ = nullptr;
    ready_ = false;
    ac->data = nullptr;       // callbacks during the free below must not find us
    redisAsyncFree(ac);       // runs every pending callback with a null reply
    schedule_reconnect();
}

void Connection::report_failed_attempt(spdlog::level::level_enum level, const std::string& what) {
    ++failed_attempts_;
    const auto now = clock::now();
    if (failed_attempts_ == 1) {
        spdlog::log(level, "redis: {}: {}", endpoint_.describe(), what);
    } else if (now >= next_failure_report_) {
        spdlog::log(level, "redis: {}: {} ({} failed attempts so far; retrying every {} ms)", endpoint_.describe(),
                    what, failed_attempts_, max_backoff.count());
    } else {
        spdlog::debug("redis: {}: {}", endpoint_.describe(), what);
        return;
    }
    next_failure_report_ = now + failure_report_interval;
}

void Connection::schedule_reconnect() {
    if (stopped_) return;
    backoff_ = backoff_.count() == 0 ? first_backoff : std::min(backoff_ * 2, max_backoff);
    reconnect_timer_.expires_after(with_jitter(backoff_));
    reconnect_timer_.async_wait([w = weak_from_this()](boost::system::error_code ec) {
        if (auto c = w.lock(); c && !ec) c->connect();
    });
}

void Connection::send(std::shared_ptr<detail::Pending> p, const std::vector<std::string>& argv,
                      clock::time_point deadline) {
    if (!usable()) {
        p->finished = true;
        p->finish(Problem{errc::store_unavailable, "not connected to " + endpoint_.describe()});
        return;
    }
    // On the stack for every single-limit script; a layered check (lua/multi.lua, 3 + 7 per
    // limit) may need more.
    boost::container::small_vector<const char*, 16> args(argv.size());
    boost::container::small_vector<size_t, 16> lens(argv.size());
    for (size_t i = 0; i < argv.size(); ++i) {
        args[i] = argv[i].data();
        lens[i] = argv[i].size();
    }
    auto* ticket = new Ticket{p, this};
    if (redisAsyncCommandArgv(ctx_, &Connection::on_reply, ticket, static_cast<int>(argv.size()),
                              args.data(), lens.data()) != REDIS_OK) {
        delete ticket;
        p->finished = true;
        p->finish(Problem{errc::store_unavailable, "connection to " + endpoint_.describe() +
                                                       " is closing"});
        return;
    }
    p->deadline.expires_at(deadline);
    p->deadline.async_wait([p, w = weak_from_this()](boost::system::error_code ec) {
        if (ec || p->finished) return;
        p->finished = true;
        p->finish(Problem{errc::store_timeout, "redis did not answer in time"});
        auto c = w.lock();
        if (c && c->ctx_ != nullptr && clock::now() - c->last_reply_ > silence_limit) {
            c->teardown("no reply for over a second");
        }
    });
}

void Connection::on_reply(redisAsyncContext* ac, void* reply, void* privdata) {
    std::unique_ptr<Ticket> ticket(static_cast<Ticket*>(privdata));
    auto& p = *ticket->pending;
    if (reply != nullptr) {
        if (auto* self = static_cast<Connection*>(ac->data)) self->last_reply_ = clock::now();
    }
    if (p.finished) return;  // its deadline passed; the late reply is dropped
    p.finished = true;
    p.deadline.cancel();
    if (reply == nullptr) {
        p.finish(Problem{errc::store_unavailable, "connection to redis lost"});
        return;
    }
    Value value;
    try {
        value = Value::from_reply(static_cast<const redisReply*>(reply));
    } catch (const std::exception& e) {
        // Called from hiredis's C code: nothing may unwind through it. This one reply is refused.
        spdlog::error("redis: a reply could not be read ({}); the call fails", e.what());
        p.finish(Problem{errc::bad_script_reply, "redis reply could not be read"});
        return;
    }
    // A write to a demoted primary (now a replica): the store is unavailable here, not
    // broken, and the primary is elsewhere. Scripts report it as "... READONLY ...".
    if (value.is_error() && value.str.find("READONLY") != std::string::npos) {
        auto* self = static_cast<Connection*>(ac->data);
        p.finish(Problem{errc::store_unavailable,
                         "redis at " + (self ? self->endpoint_.describe() : std::string("?")) +
                             " is a read-only replica"});
        if (self != nullptr && self->source_) {
            self->source_->suspect();
            // Not from inside hiredis's read callback: the teardown frees the context.
            net::post(self->executor_, [w = self->weak_from_this(), ac] {
                if (auto c = w.lock(); c && c->ctx_ == ac) c->teardown("READONLY: it is a replica now");
            });
        }
        return;
    }
    p.finish(std::move(value));
}

}  // namespace ratelimitd::store::redis
