// The quota webhooks' sender: takes crossings from the check path without waiting, and
// delivers them on a thread of its own with retries, backoff, a cap per target and a deadline.
#pragma once

#include "ratelimitd/notify/connection_pool.hpp"
#include "ratelimitd/notify/delivery_queue.hpp"
#include "ratelimitd/notify/notify_metrics.hpp"
#include "ratelimitd/service/crossing_sink.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace ratelimitd::notify {

/// How hard the sender tries (docs/operations.md "Quota webhooks").
struct NotifierOptions {
    std::size_t queue = 10'000;          ///< events waiting (notify_queue); beyond: dropped, counted
    std::size_t per_target = 4;          ///< deliveries in flight to one target at once
    int attempts = 6;                    ///< tries per event, the first included
    std::chrono::milliseconds first_backoff{200};  ///< pause after the first failure, doubled each time
    std::chrono::milliseconds max_backoff{5'000};
    std::chrono::milliseconds deadline{60'000};    ///< no attempt starts later than this after queueing
};

/// @par Thread Safety
/// offer(), send_sample() and metrics() from any thread; construction and destruction on one.
/// Deliveries run on the notifier's own thread, so a slow or dead receiver costs the server
/// threads nothing but the offer's lock and copy: the lock is held for a push or a take, whose
/// cost does not grow with the events waiting, and a full queue drops an event before its body
/// is even written.
class Notifier final : public service::CrossingSink {
public:
    explicit Notifier(NotifierOptions options);
    /// Stops the thread; events still queued or in flight are dropped (not counted as failed).
    ~Notifier() override;
    Notifier(const Notifier&) = delete;
    Notifier& operator=(const Notifier&) = delete;

    void offer(service::Crossing c) noexcept override;
    boost::asio::awaitable<result<unsigned>> send_sample(std::shared_ptr<const policy::NotifyTarget> target) override;

    [[nodiscard]] const NotifyMetrics& metrics() const noexcept { return metrics_; }
    /// Events a target accepted so far, over every target.
    [[nodiscard]] std::uint64_t sent() const noexcept { return metrics_.sent(); }

private:
    /// Starts deliveries while some waiting event's target has room. On the notifier's thread.
    void pump();
    boost::asio::awaitable<void> deliver(PendingEvent e);
    /// The pause after failed attempt `attempt` (0-based): doubling from first_backoff, capped,
    /// plus up to a quarter more at random so that sidecars do not retry in step.
    std::chrono::milliseconds backoff(int attempt);

    const NotifierOptions options_;
    NotifyMetrics metrics_;
    std::mutex mu_;  // guards queue_
    DeliveryQueue queue_;
    std::atomic<bool> queue_full_{false};  // queue_.full() as of the last push or take
    std::atomic<bool> pump_posted_{false};
    std::map<std::string, std::size_t, std::less<>> in_flight_;  // by target; the notifier's thread only
    std::uint64_t jitter_state_;                                  // the notifier's thread only
    // Last: destroyed first, with the frames of deliveries in flight, while the rest still exists.
    boost::asio::io_context ioc_{1};
    ConnectionPool pool_{options_.per_target};  // the notifier's thread only; goes before ioc_
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
    std::thread thread_;
};

}  // namespace ratelimitd::notify
