// Backoff::next: initial * factor^attempt, jittered between initial and that, clamped.
#include "ratelimitd/xds/backoff.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace ratelimitd::xds {

Backoff::Backoff(BackoffOptions options, std::function<double()> uniform)
    : options_(options), uniform_(std::move(uniform)) {
    if (!uniform_) {
        uniform_ = [engine = std::mt19937_64(std::random_device{}())]() mutable {
            return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
        };
    }
}

std::chrono::milliseconds Backoff::next() {
    const double least = static_cast<double>(options_.initial.count());
    const double most = static_cast<double>(options_.max.count());
    const auto attempt = attempt_;
    // Past ~64 attempts every factor above 1 is far beyond any max: stop counting there.
    if (attempt_ < 64) ++attempt_;
    if (least >= most) return options_.max;
    const double factor = options_.factor <= 0 ? 2.0 : options_.factor;
    double wait = least * std::pow(factor, static_cast<double>(attempt));
    if (options_.jitter) wait = uniform_() * (wait - least) + least;
    if (!std::isfinite(wait) || wait > most) return options_.max;
    if (wait < least) return options_.initial;
    return std::chrono::milliseconds(static_cast<std::int64_t>(wait));
}

}  // namespace ratelimitd::xds
