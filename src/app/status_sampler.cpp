// StatusSampler: a timer re-armed from its deadline (not from when it ran), so the samples stay
// one interval apart on average even when the main thread was busy.
#include "ratelimitd/app/status_sampler.hpp"

#include <charconv>
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

std::uint64_t webhooks_sent_in(std::string_view text) {
    constexpr std::string_view series = "ratelimitd_notify_sent_total{";
    std::uint64_t sum = 0;
    for (std::size_t at = text.find(series); at != std::string_view::npos; at = text.find(series, at + 1)) {
        if (at != 0 && text[at - 1] != '\n') continue;  // a sample line, not the HELP text
        const auto space = text.find("} ", at);
        const auto end = text.find('\n', at);
        if (space == std::string_view::npos || space > end) continue;
        std::uint64_t n = 0;
        const char* first = text.data() + space + 2;
        const char* last = end == std::string_view::npos ? text.data() + text.size() : text.data() + end;
        if (std::from_chars(first, last, n).ec == std::errc{}) sum += n;
    }
    return sum;
}

}  // namespace ratelimitd::app
