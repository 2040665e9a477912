// Tracing: the settings read once into the exporter's target, resource and sampler.
#include "ratelimitd/app/tracing.hpp"

#include <spdlog/spdlog.h>

namespace ratelimitd::app {
namespace {

// OTEL_BSP_MAX_QUEUE_SIZE's default: at 100 % sampling it holds two seconds of a thousand
// checks a second; past it spans are dropped and counted, never waited for.
constexpr std::size_t queue_spans = 2048;

}  // namespace

std::unique_ptr<Tracing> Tracing::from_settings(const config::Settings& settings, const std::string& version,
                                                bool& failed) {
    failed = false;
    if (!settings.trace_endpoint) return nullptr;
    const auto protocol = settings.trace_protocol == "grpc" ? otlp::Protocol::grpc : otlp::Protocol::http_protobuf;
    auto target = otlp::parse_exporter_target(protocol, *settings.trace_endpoint,
                                              settings.trace_headers.value_or(std::string{}), settings.trace_insecure);
    if (!target) {
        spdlog::error("trace_endpoint: {}", target.error().detail);
        failed = true;
        return nullptr;
    }
    const auto sampler = trace::Sampler::named(settings.trace_sampler, settings.trace_sampler_arg);
    if (!sampler) {  // the table's choices are the sampler's names: a bug if reached
        spdlog::error("trace_sampler: {} is not a sampler", settings.trace_sampler);
        failed = true;
        return nullptr;
    }
    otlp::ExporterOptions options;
    options.protocol = protocol;
    options.target = std::move(*target);
    options.resource = {settings.trace_service_name, settings.trace_service_namespace,
                        settings.trace_service_instance_id, version};
    spdlog::info("tracing: {} to {}:{}{} sampler={} ratio={}", settings.trace_protocol, options.target.host,
                 options.target.port, protocol == otlp::Protocol::grpc ? "" : options.target.target,
                 settings.trace_sampler, sampler->ratio());
    return std::make_unique<Tracing>(*sampler, std::move(options));
}

Tracing::Tracing(const trace::Sampler& sampler, otlp::ExporterOptions options)
    : queue_(queue_spans, options.max_batch), tracer_(sampler, queue_), exporter_(std::move(options), queue_) {
    exporter_.start();
}

Tracing::~Tracing() { exporter_.stop(); }

}  // namespace ratelimitd::app
