// StatsdSink: a thread that wakes every interval, turns the counters' growth into statsd
// lines and sends them in datagrams with non-blocking sendto.
#include "ratelimitd/stats/statsd_sink.hpp"

#include <fmt/format.h>
#include <netdb.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace ratelimitd::stats {

StatsdSink::StatsdSink(ErlStats& stats, StatsdOptions options)
    : stats_(stats), options_(std::move(options)), tag_suffix_(statsd_tag_suffix(options_.tags)) {
    thread_ = std::thread([this] { run(); });
}

StatsdSink::~StatsdSink() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
    if (fd_ >= 0) ::close(fd_);
}

void StatsdSink::run() {
    std::unique_lock lock(mu_);
    while (!stop_) {
        wake_.wait_for(lock, options_.interval, [this] { return stop_; });
        lock.unlock();
        flush();
        lock.lock();
    }
}

bool StatsdSink::resolve() {
    if (fd_ >= 0) return true;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* found = nullptr;
    const auto port = std::to_string(options_.port);
    if (::getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
        spdlog::warn("statsd: cannot resolve {}:{}; will try again at the next flush", options_.host, options_.port);
        return false;
    }
    fd_ = ::socket(found->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ >= 0) {
        const auto* bytes = reinterpret_cast<const unsigned char*>(found->ai_addr);
        address_.assign(bytes, bytes + found->ai_addrlen);
    }
    ::freeaddrinfo(found);
    return fd_ >= 0;
}

void StatsdSink::send(const std::string& datagram) {
    const auto n = ::sendto(fd_, datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                            reinterpret_cast<const sockaddr*>(address_.data()),
                            static_cast<socklen_t>(address_.size()));
    (n == static_cast<ssize_t>(datagram.size()) ? datagrams_sent_ : datagrams_failed_)
        .fetch_add(1, std::memory_order_relaxed);
}

void StatsdSink::flush() {
    stats_.refresh_config_loads();
    const ErlStatTable& table = stats_.table();
    const std::size_t n = table.size();
    sent_.resize(n, 0);
    const bool can_send = resolve();
    std::string datagram;
    std::string line;
    for (std::size_t i = 0; i < n; ++i) {
        const ErlCounter& c = table.at(i);
        const std::uint64_t now = c.value.load(std::memory_order_relaxed);
        if (now == sent_[i]) continue;  // unmoved counters are not sent, as its stats library does
        line.clear();
        append_statsd_counter(line, c.name, tag_suffix_, now - sent_[i]);
        sent_[i] = now;  // a growth that could not be sent is lost, as a UDP datagram may be
        if (!can_send) continue;
        if (!datagram.empty() && datagram.size() + line.size() > options_.max_datagram) {
            send(datagram);
            datagram.clear();
        }
        datagram += line;
    }
    if (can_send && !datagram.empty()) send(datagram);
}

std::string StatsdSink::render() const {
    return fmt::format(
        "# HELP ratelimitd_erl_statsd_datagrams_total statsd datagrams of ERL mode's stats, by whether sendto took "
        "them.\n"
        "# TYPE ratelimitd_erl_statsd_datagrams_total counter\n"
        "ratelimitd_erl_statsd_datagrams_total{{result=\"sent\"}} {}\n"
        "ratelimitd_erl_statsd_datagrams_total{{result=\"failed\"}} {}\n",
        datagrams_sent_.load(std::memory_order_relaxed), datagrams_failed_.load(std::memory_order_relaxed));
}

}  // namespace ratelimitd::stats
