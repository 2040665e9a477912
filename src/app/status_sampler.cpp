// StatusSampler: a timer re-armed from its deadline (not from when it ran), so the samples stay
// one interval apart on average even when the main thread was busy.
#include "ratelimitd/app/status_sampler.hpp"

#include <chrono>

namespace ratelimitd::app {
namespace {

std::int64_t now_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

StatusSampler::StatusSampler(boost::asio::any_io_executor executor, service::StatusHistory& history, ReadTotals read)
    : timer_(std::move(executor)), history_(history), read_(std::move(read)) {}

void StatusSampler::start() {
    history_.record(now_ms(), read_());
    timer_.expires_after(service::StatusHistory::interval);
    timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec) tick();
    });
}

void StatusSampler::tick() {
    history_.record(now_ms(), read_());
    timer_.expires_at(timer_.expiry() + service::StatusHistory::interval);
    timer_.async_wait([this](boost::system::error_code ec) {
        if (!ec) tick();
    });
}

}  // namespace ratelimitd::app
