// Samplers: the ratio is turned into an integer bound once, so a decision is a compare.
#include "ratelimitd/trace/sampler.hpp"

#include <cmath>

namespace ratelimitd::trace {
namespace {

constexpr double two_to_63 = 9223372036854775808.0;

double clamp_ratio(double ratio) noexcept {
    if (!(ratio > 0.0)) return 0.0;  // NaN too
    return ratio > 1.0 ? 1.0 : ratio;
}

std::uint64_t bound_of(double ratio) noexcept {
    // ratio 1 admits every id: the shifted value is at most 2^63 - 1, below 2^63.
    if (ratio >= 1.0) return std::uint64_t{1} << 63;
    return static_cast<std::uint64_t>(ratio * two_to_63);
}

}  // namespace

bool trace_id_below_ratio(const TraceId& trace_id, std::uint64_t bound) noexcept {
    std::uint64_t low = 0;
    for (std::size_t i = 8; i < 16; ++i) low = low << 8 | trace_id[i];
    return (low >> 1) < bound;
}

Sampler::Sampler(bool parent_based, double ratio) noexcept
    : parent_based_(parent_based), ratio_(clamp_ratio(ratio)), bound_(bound_of(ratio_)) {}

Sampler Sampler::parent_based_ratio(double ratio) noexcept { return Sampler(true, ratio); }

std::optional<Sampler> Sampler::named(std::string_view name, double ratio) noexcept {
    const bool parent_based = name.starts_with("parentbased_");
    const auto root = parent_based ? name.substr(12) : name;
    if (root == "always_on") return Sampler(parent_based, 1.0);
    if (root == "always_off") return Sampler(parent_based, 0.0);
    if (root == "traceidratio") return Sampler(parent_based, ratio);
    return std::nullopt;
}

bool Sampler::should_sample(const TraceId& trace_id, const SpanContext* parent) const noexcept {
    if (parent_based_ && parent != nullptr) return parent->sampled();
    return trace_id_below_ratio(trace_id, bound_);
}

}  // namespace ratelimitd::trace
