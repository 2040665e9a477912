// Traces for the process (docs/tracing.md): from the settings, the sampler and tracer the doors
// ask, the bounded queue they hand spans to, and the export thread that drains it.
#pragma once

#include "ratelimitd/config/settings.hpp"
#include "ratelimitd/otlp/exporter.hpp"
#include "ratelimitd/otlp/encoded_span_queue.hpp"
#include "ratelimitd/trace/tracer.hpp"

#include <memory>
#include <string>

namespace ratelimitd::app {

class Tracing {
public:
    /// Null when trace_endpoint is unset (tracing off); an error line and null when a trace
    /// setting cannot be used (set `failed`).
    static std::unique_ptr<Tracing> from_settings(const config::Settings& settings, const std::string& version,
                                                  bool& failed);

    Tracing(const trace::Sampler& sampler, otlp::ExporterOptions options);
    ~Tracing();  ///< the exporter's last flush, after the threads that submit have stopped

    [[nodiscard]] const trace::Tracer& tracer() const noexcept { return tracer_; }
    [[nodiscard]] std::string metrics_text() const { return exporter_.metrics_text(); }

private:
    otlp::EncodedSpanQueue queue_;
    trace::Tracer tracer_;
    otlp::Exporter exporter_;
};

}  // namespace ratelimitd::app
