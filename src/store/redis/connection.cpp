// Connection: the Redis protocol over a Transport (TCP or TLS), with per-command deadlines,
// setup on every connection, and reconnect with backoff.
#include "ratelimitd/store/redis/connection.hpp"

#include "ratelimitd/store/redis/value_reader.hpp"

#include "tls_context.hpp"
#include "transport.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <deque>
#include <random>

namespace ratelimitd::store::redis {

namespace net = boost::asio;

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

std::chrono::milliseconds with_jitter(std::chrono::milliseconds d) {
    static thread_local std::minstd_rand rng{std::random_device{}()};
    std::uniform_int_distribution<long> spread(0, d.count() / 2);
    return d + std::chrono::milliseconds(spread(rng));
}

}  // namespace

namespace detail {

/// One socket and what is in flight on it. Handlers hold it alive; a handler whose link is no
/// longer the connection's current one does nothing, so nothing from an old socket is ever
/// matched to a command sent on a new one.
struct Link {
    Link(const net::any_io_executor& ex, const Endpoint& ep) : transport(ex, ep) {}
    Transport transport;
    ValueReader reader;
    /// One entry per command written or queued, in order: Redis answers in that order. A null
    /// entry is a setup command (AUTH, SELECT, SCRIPT LOAD).
    std::deque<std::shared_ptr<Pending>> expected;
    std::string outbox;    // encoded commands not yet handed to the stream
    std::string writing;   // the bytes of the write in flight
    bool open = false;     // connected (and handshaken): writes may start
    bool write_in_flight = false;
    std::array<char, 16 * 1024> input{};
};

}  // namespace detail

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
    if (link_ != nullptr && current && current->host == endpoint_.host && current->port == endpoint_.port) return;
    if (link_ != nullptr) teardown("the primary moved");
    backoff_ = std::chrono::milliseconds{0};
    reconnect_timer_.cancel();
    connect();
}

void Connection::connect() {
    if (stopped_ || link_ != nullptr) return;
    if (source_) {
        auto current = source_->current();
        if (!current) {
            schedule_reconnect();  // no primary known yet: commands fail fast meanwhile
            return;
        }
        endpoint_ = std::move(*current);
    }
    auto link = std::make_shared<detail::Link>(executor_, endpoint_);
    link_ = link;
    linked_.store(true, std::memory_order_relaxed);
    last_reply_ = clock::now();
    send_setup();  // queued: written first once the stream is open
    link->transport.async_open([w = weak_from_this(), link](const std::string& failure) {
        if (auto c = w.lock()) c->on_open(link, failure);
    });

    // A connect that neither succeeds nor fails (a black-holed address) is abandoned.
    connect_timer_.expires_after(connect_timeout);
    connect_timer_.async_wait([self = weak_from_this(), link](boost::system::error_code ec) {
        auto c = self.lock();
        if (ec || !c || c->link_ != link || c->ready_) return;
        c->report_failed_attempt(spdlog::level::warn, "connect timed out");
        c->teardown("connect timed out");
    });
}

void Connection::on_open(const LinkPtr& link, const std::string& failure) {
    if (link_ != link) return;  // abandoned meanwhile
    if (!failure.empty()) {
        report_failed_attempt(spdlog::level::warn, "connect failed: " + failure);
        drop_link();
        schedule_reconnect();
        return;
    }
    if (endpoint_.tls && endpoint_.tls_options.insecure_skip_verify) warn_insecure_tls(endpoint_.describe());
    link->open = true;
    read(link);
    flush(link);
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
        std::string command;
        append_command(command, {}, argv);
        enqueue(std::move(command), nullptr);
    }
}

void Connection::enqueue(std::string command, std::shared_ptr<detail::Pending> p) {
    // The usual case, nothing waiting to be written: the command becomes the outbox.
    if (link_->outbox.empty()) link_->outbox.swap(command);
    else link_->outbox.append(command);
    link_->expected.push_back(std::move(p));
}

// One write at a time; commands sent meanwhile gather in the outbox and go out together.
void Connection::flush(const LinkPtr& link) {
    if (!link->open || link->write_in_flight || link->outbox.empty()) return;
    link->writing.clear();
    link->writing.swap(link->outbox);
    link->write_in_flight = true;
    link->transport.async_write(link->writing, [w = weak_from_this(), link](boost::system::error_code ec, std::size_t) {
        link->write_in_flight = false;
        auto c = w.lock();
        if (!c || c->link_ != link) return;
        if (ec) c->on_lost(link, Transport::describe_error(ec));
        else c->flush(link);
    });
}

void Connection::read(const LinkPtr& link) {
    link->transport.async_read_some(net::buffer(link->input), [w = weak_from_this(), link](boost::system::error_code ec,
                                                                                         std::size_t n) {
        auto c = w.lock();
        if (!c || c->link_ != link) return;
        if (ec) c->on_lost(link, ec == net::error::eof ? "the server closed it" : Transport::describe_error(ec));
        else c->on_read(link, n);
    });
}

void Connection::on_read(const LinkPtr& link, std::size_t n) {
    if (!link->reader.feed(link->input.data(), n)) {
        teardown("out of memory reading a reply");
        return;
    }
    // Each handler below may end this link (a failed setup, READONLY, a hook): then stop.
    while (link_ == link) {
        Value value;
        // The next reply answers the oldest command still expected: read as it asked.
        const auto& next = link->expected;
        link->reader.expect_integers(!next.empty() && next.front() != nullptr && next.front()->flat_reply);
        const auto status = link->reader.next(value);
        if (status == ValueReader::Status::malformed) {
            // Not the protocol, or no memory left to hold the reply: the stream cannot be trusted.
            const std::string why = "a reply could not be read (" + link->reader.error() + ")";
            teardown(why.c_str());
            return;
        }
        if (status == ValueReader::Status::incomplete) break;  // the rest has not arrived yet
        last_reply_ = clock::now();
        if (link->expected.empty()) {
            teardown("a reply came that no command asked for");
            return;
        }
        auto p = std::move(link->expected.front());
        link->expected.pop_front();
        if (p) on_reply(*p, std::move(value));
        else on_setup_reply(value);
    }
    if (link_ == link) {
        if (endpoint_.tls && endpoint_.tls_options.insecure_skip_verify) warn_insecure_tls(endpoint_.describe());
        read(link);
    }
}

void Connection::on_lost(const LinkPtr& link, const std::string& why) {
    if (link_ != link) return;
    if (ready_) {
        spdlog::warn("redis: connection to {} lost: {}", endpoint_.describe(), why);
    } else {
        // Never set up: part of the outage's attempts (a refused TLS client certificate ends here).
        report_failed_attempt(spdlog::level::warn, "connection lost while setting up: " + why);
    }
    drop_link();
    schedule_reconnect();
}

void Connection::on_setup_reply(const Value& reply) {
    if (reply.is_error()) {
        // Wrong password or db: retrying soon will not help, but the operator may fix Redis.
        report_failed_attempt(spdlog::level::err, "setting up failed: " + reply.str);
        setup_pending_ = -1;
        teardown("setup failed");
        return;
    }
    if (setup_pending_ > 0 && --setup_pending_ == 0) {
        ready_ = true;
        backoff_ = std::chrono::milliseconds{0};
        connect_timer_.cancel();
        last_reply_ = clock::now();
        if (failed_attempts_ > 0) {
            spdlog::info("redis: connected to {}, scripts loaded (after {} failed attempts)", endpoint_.describe(),
                         failed_attempts_);
        } else {
            spdlog::info("redis: connected to {}, scripts loaded", endpoint_.describe());
        }
        failed_attempts_ = 0;
        if (was_ready_ && on_reconnected_) on_reconnected_();
        was_ready_ = true;
    }
}

void Connection::teardown(const char* why) {
    if (link_ == nullptr) return;
    // A connection that never got set up was already reported as a failed attempt.
    if (why != nullptr) {
        spdlog::log(setup_pending_ < 0 || !ready_ ? spdlog::level::debug : spdlog::level::warn,
                    "redis: dropping connection to {}: {}", endpoint_.describe(), why);
    }
    drop_link();
    schedule_reconnect();
}

void Connection::drop_link() {
    LinkPtr link = std::move(link_);
    link_ = nullptr;
    linked_.store(false, std::memory_order_relaxed);
    ready_ = false;
    link->transport.close();
    for (auto& p : link->expected) {
        if (!p || p->finished) continue;
        p->finished = true;
        p->deadline.cancel();
        p->finish(Problem{errc::store_unavailable, "connection to redis lost"});
    }
    link->expected.clear();
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

std::string& Connection::output() noexcept { return link_->outbox; }

void Connection::fail_unsent(detail::Pending& p) {
    p.finished = true;
    p.finish(Problem{errc::store_unavailable, "not connected to " + endpoint_.describe()});
}

void Connection::send(std::shared_ptr<detail::Pending> p, clock::time_point deadline) {
    link_->expected.push_back(p);
    flush(link_);
    p->deadline.expires_at(deadline);
    p->deadline.async_wait([p, w = weak_from_this()](boost::system::error_code ec) {
        if (ec || p->finished) return;
        p->finished = true;
        p->finish(Problem{errc::store_timeout, "redis did not answer in time"});
        auto c = w.lock();
        if (c && c->link_ != nullptr && clock::now() - c->last_reply_ > silence_limit) {
            c->teardown("no reply for over a second");
        }
    });
}

void Connection::on_reply(detail::Pending& p, Value value) {
    if (p.finished) return;  // its deadline passed; the late reply is dropped
    p.finished = true;
    p.deadline.cancel();
    // A write to a demoted primary (now a replica): the store is unavailable here, not
    // broken, and the primary is elsewhere. Scripts report it as "... READONLY ...".
    if (value.is_error() && value.str.find("READONLY") != std::string::npos) {
        p.finish(Problem{errc::store_unavailable, "redis at " + endpoint_.describe() + " is a read-only replica"});
        if (source_) {
            source_->suspect();
            teardown("READONLY: it is a replica now");
        }
        return;
    }
    p.finish(std::move(value));
}

}  // namespace ratelimitd::store::redis
