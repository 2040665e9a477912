// Which checks record a span: OpenTelemetry's samplers by their OTEL_TRACES_SAMPLER names, the
// parent-based ones following the caller's sampled flag so that a trace is whole or absent.
#pragma once

#include "ratelimitd/trace/span_context.hpp"

#include <optional>
#include <string_view>

namespace ratelimitd::trace {

/// A decision made from the trace id and the remote parent only: no clock, no state, no lock, so
/// every thread may share one sampler and the same trace gets the same answer on every replica.
class Sampler {
public:
    /// OTEL_TRACES_SAMPLER's values always_on, always_off, traceidratio and their parentbased_
    /// forms; `ratio` (OTEL_TRACES_SAMPLER_ARG, ERL's TRACING_SAMPLING_RATE) is clamped to [0, 1]
    /// and used by the two ratio samplers only. nullopt for any other name.
    [[nodiscard]] static std::optional<Sampler> named(std::string_view name, double ratio) noexcept;
    /// parentbased_traceidratio: the default when tracing is on.
    [[nodiscard]] static Sampler parent_based_ratio(double ratio) noexcept;

    /// With a parent, a parent-based sampler follows its sampled flag; otherwise (or without a
    /// parent) the root rule decides.
    [[nodiscard]] bool should_sample(const TraceId& trace_id, const SpanContext* parent) const noexcept;

    /// A root's decision from its trace id's last 8 bytes (big-endian) alone: what should_sample
    /// answers without a parent, before the rest of the id exists.
    [[nodiscard]] bool should_sample_root(std::uint64_t trace_id_low) const noexcept {
        return (trace_id_low >> 1) < bound_;
    }

    [[nodiscard]] double ratio() const noexcept { return ratio_; }
    [[nodiscard]] bool parent_based() const noexcept { return parent_based_; }

private:
    Sampler(bool parent_based, double ratio) noexcept;

    bool parent_based_;
    double ratio_;
    /// A root is sampled when the trace id's last 8 bytes, big-endian and shifted right by one,
    /// are below ratio * 2^63: the rule OpenTelemetry's TraceIdRatioBased SDKs share, so a trace
    /// a Go or Java service sampled at the same ratio is sampled here too.
    std::uint64_t bound_;
};

/// The rule above, on its own (tests compare it with the binomial bounds).
[[nodiscard]] bool trace_id_below_ratio(const TraceId& trace_id, std::uint64_t bound) noexcept;

}  // namespace ratelimitd::trace
