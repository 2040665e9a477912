// QuotaFilter: the rate_limit_quota filter's enforcement and reporting loop for one bucket.
#include "support/quota_filter.hpp"

#include <algorithm>

namespace ratelimitd::test {

namespace {

using Clock = std::chrono::steady_clock;
using Strategy = envoy::type::v3::RateLimitStrategy;

std::int64_t epoch_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::chrono::milliseconds millis(const google::protobuf::Duration& d) {
    return std::chrono::milliseconds(d.seconds() * 1000 + d.nanos() / 1'000'000);
}

}  // namespace

/// The assignment in force and its token bucket's state.
struct QuotaFilter::Assignment {
    enum class Kind { allow_all, deny_all, tokens } kind = Kind::deny_all;
    double max_tokens = 0;
    double per_ms = 0;  ///< refill rate
    double tokens = 0;
    Clock::time_point refilled;
    Clock::time_point expires;

    bool admit(Clock::time_point now) {
        if (now >= expires) return false;  // expired: no_assignment_behavior, DENY_ALL
        if (kind != Kind::tokens) return kind == Kind::allow_all;
        const double ms = std::chrono::duration<double, std::milli>(now - refilled).count();
        tokens = std::min(max_tokens, tokens + ms * per_ms);
        refilled = now;
        if (tokens < 1) return false;
        tokens -= 1;
        return true;
    }
};

/// One stream and the thread that reads its answers.
struct QuotaFilter::Session {
    QuotaStreamClient client;
    std::atomic<bool> ended{false};
    std::thread reader;

    Session(unsigned short port, QuotaFilter& owner) : client(port, std::chrono::milliseconds(600'000)) {
        reader = std::thread([this, &owner] {
            while (auto answer = client.read()) owner.on_answer(*answer);
            ended = true;
        });
    }
    /// Half-closes, waits for the server to end the stream; its status.
    grpc::Status close() {
        if (!ended) client.close_writes();
        reader.join();
        return client.status();
    }
};

QuotaFilter::QuotaFilter(QuotaFilterSettings settings)
    : settings_(std::move(settings)), replica_(settings_.first_replica) {
    runner_ = std::thread([this] { run(); });
}

QuotaFilter::~QuotaFilter() { leave(); }

void QuotaFilter::leave() {
    if (leaving_.exchange(true)) return;
    runner_.join();
}

void QuotaFilter::open_session() {
    if (session_) {
        // The server went away (a replica stopped or killed): Envoy reconnects, and the
        // cluster sends it to the next replica.
        session_->close();
        replica_ = (replica_ + 1) % settings_.replicas.size();
    }
    session_ = std::make_unique<Session>(settings_.replicas[replica_], *this);
    const std::lock_guard lock(mutex_);
    ++streams_;
    stream_starts_.push_back(epoch_ms());
}

void QuotaFilter::on_answer(const QuotaResponse& response) {
    const auto now = Clock::now();
    const std::lock_guard lock(mutex_);
    ++answers_;
    for (const auto& action : response.bucket_action()) {
        if (!action.has_quota_assignment_action()) {
            assignment_.reset();  // abandoned: no assignment
            continue;
        }
        const auto& given = action.quota_assignment_action();
        auto next = std::make_unique<Assignment>();
        next->expires = now + millis(given.assignment_time_to_live());
        next->refilled = now;
        const auto& strategy = given.rate_limit_strategy();
        if (strategy.has_token_bucket()) {
            const auto& bucket = strategy.token_bucket();
            next->kind = Assignment::Kind::tokens;
            next->max_tokens = bucket.max_tokens();
            next->tokens = next->max_tokens;  // full: the worst case for the fleet's bound
            const double per_fill = bucket.has_tokens_per_fill() ? bucket.tokens_per_fill().value() : 1.0;
            next->per_ms = per_fill / static_cast<double>(std::max<std::int64_t>(1, millis(bucket.fill_interval()).count()));
        } else {
            next->kind = strategy.blanket_rule() == Strategy::ALLOW_ALL ? Assignment::Kind::allow_all
                                                                        : Assignment::Kind::deny_all;
        }
        assignment_ = std::move(next);
    }
}

void QuotaFilter::request(Clock::time_point now) {
    const std::lock_guard lock(mutex_);
    if (assignment_ && assignment_->admit(now)) {
        ++allowed_;
        admitted_.push_back(epoch_ms());
    } else {
        ++denied_;
    }
}

void QuotaFilter::report(Clock::time_point now) {
    if (!session_ || session_->ended) open_session();
    QuotaUsage usage{settings_.bucket, 0, 0,
                     std::chrono::duration_cast<std::chrono::milliseconds>(now - last_report_)};
    {
        const std::lock_guard lock(mutex_);
        usage.allowed = allowed_;
        usage.denied = denied_;
    }
    last_report_ = now;
    // Counted as sent once written: a report to a server that just died is lost, as Envoy's.
    if (!session_->client.send(quota_report(settings_.domain, {usage}))) return;
    const std::lock_guard lock(mutex_);
    allowed_ -= usage.allowed;
    denied_ -= usage.denied;
}

void QuotaFilter::run() {
    const auto period = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(1.0 / settings_.requests_per_second));
    auto next_request = Clock::now();
    // The bucket's first request is denied (no assignment yet) and reported at once.
    last_report_ = next_request - settings_.reporting_interval;
    request(next_request);
    next_request += period;
    report(Clock::now());
    while (!leaving_) {
        const auto now = Clock::now();
        if (now >= next_request) {
            request(now);
            next_request += period;
        }
        if (session_->ended || now - last_report_ >= settings_.reporting_interval) report(now);
        std::this_thread::sleep_until(std::min(next_request, last_report_ + settings_.reporting_interval));
    }
    if (session_ && !session_->close().ok()) stream_error_ = true;
}

std::vector<std::int64_t> QuotaFilter::admitted() const {
    const std::lock_guard lock(mutex_);
    return admitted_;
}

std::vector<std::int64_t> QuotaFilter::stream_starts() const {
    const std::lock_guard lock(mutex_);
    return stream_starts_;
}

std::size_t QuotaFilter::streams() const {
    const std::lock_guard lock(mutex_);
    return streams_;
}

std::size_t QuotaFilter::answers() const {
    const std::lock_guard lock(mutex_);
    return answers_;
}

}  // namespace ratelimitd::test
