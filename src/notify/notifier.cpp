// Notifier: offer() queues under a lock and posts a pump; the pump and the deliveries run on
// the notifier's io_context thread.
#include "ratelimitd/notify/notifier.hpp"

#include "ratelimitd/notify/event_body.hpp"
#include "ratelimitd/notify/signature.hpp"
#include "ratelimitd/notify/webhook_client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

namespace ratelimitd::notify {

namespace net = boost::asio;
using steady = std::chrono::steady_clock;

namespace {

std::int64_t unix_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::int64_t unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace

Notifier::Notifier(NotifierOptions options)
    : options_(options),
      queue_(options.queue),
      jitter_state_(std::random_device{}()),
      work_(net::make_work_guard(ioc_)),
      thread_([this] { ioc_.run(); }) {}

Notifier::~Notifier() {
    work_.reset();
    ioc_.stop();
    thread_.join();
    pool_.clear();
}

void Notifier::offer(service::Crossing c) noexcept {
    try {
        if (!c.rule || !c.rule->target) return;
        if (queue_full_.load(std::memory_order_relaxed)) {
            metrics_.count_dropped();
            return;
        }
        PendingEvent e{c.rule->target, event_id(c), {}, steady::now()};
        e.body = event_body(c, e.id);
        {
            std::lock_guard lock(mu_);
            const bool queued = queue_.push(std::move(e));
            queue_full_.store(queue_.full(), std::memory_order_relaxed);
            if (!queued) {
                metrics_.count_dropped();
                return;
            }
            metrics_.set_queued(queue_.size());
        }
        if (!pump_posted_.exchange(true)) {
            net::post(ioc_, [this] {
                pump_posted_ = false;
                pump();
            });
        }
    } catch (...) {
        // Out of memory building the event: it is lost, the check is not.
        metrics_.count_dropped();
    }
}

void Notifier::pump() {
    const auto has_room = [this](const std::string& target) {
        auto it = in_flight_.find(target);
        return it == in_flight_.end() || it->second < options_.per_target;
    };
    for (;;) {
        std::optional<PendingEvent> next;
        {
            std::lock_guard lock(mu_);
            next = queue_.take(has_room);
            queue_full_.store(queue_.full(), std::memory_order_relaxed);
            metrics_.set_queued(queue_.size());
        }
        if (!next) return;
        ++in_flight_[next->target->name];
        net::co_spawn(ioc_, deliver(std::move(*next)), net::detached);
    }
}

std::chrono::milliseconds Notifier::backoff(int attempt) {
    auto pause = options_.first_backoff;
    for (int i = 0; i < attempt && pause < options_.max_backoff; ++i) pause *= 2;
    pause = std::min(pause, options_.max_backoff);
    jitter_state_ = jitter_state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto quarter = std::max<std::int64_t>(1, pause.count() / 4);
    const auto extra = (jitter_state_ >> 33) % static_cast<std::uint64_t>(quarter);
    return pause + std::chrono::milliseconds(static_cast<std::int64_t>(extra));
}

net::awaitable<void> Notifier::deliver(PendingEvent e) {
    const std::string& target = e.target->name;
    const auto deadline = e.queued_at + options_.deadline;
    for (int attempt = 0;; ++attempt) {
        const auto started = steady::now();
        // Signed at each attempt: the time a receiver checks is the time it was sent.
        auto status = co_await post_event(*e.target, e.body, signature_value(*e.target, unix_seconds(), e.body),
                                          &pool_);
        metrics_.observe_attempt(target, steady::now() - started);
        if (status && *status >= 200 && *status < 300) {
            metrics_.count_sent(target);
            break;
        }
        const std::string why = status ? "answered HTTP " + std::to_string(*status) : status.error().detail;
        const auto pause = backoff(attempt);
        if (attempt + 1 >= options_.attempts || steady::now() + pause > deadline) {
            metrics_.count_failed(target);
            spdlog::warn("notify: event {} not delivered to target {} after {} attempts: {}", e.id, target,
                         attempt + 1, why);
            break;
        }
        metrics_.count_retried(target);
        spdlog::debug("notify: event {} to target {}: {}; retrying in {}ms", e.id, target, why, pause.count());
        net::steady_timer timer(ioc_, pause);
        co_await timer.async_wait(net::as_tuple(net::use_awaitable));
    }
    if (auto it = in_flight_.find(target); it != in_flight_.end() && it->second > 0) --it->second;
    pump();
}

net::awaitable<result<unsigned>> Notifier::send_sample(std::shared_ptr<const policy::NotifyTarget> target) {
    const std::string id = new_event_id();
    const std::string body = sample_body(id, unix_ms());
    const auto started = steady::now();
    auto status = co_await post_event(*target, body, signature_value(*target, unix_seconds(), body));
    metrics_.observe_attempt(target->name, steady::now() - started);
    if (status && *status >= 200 && *status < 300) metrics_.count_sent(target->name);
    co_return status;
}

}  // namespace ratelimitd::notify
