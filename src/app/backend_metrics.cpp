// report_backend_stats: the backend's series become the metrics' store series.
#include "ratelimitd/app/backend_metrics.hpp"

namespace ratelimitd::app {

void report_backend_stats(service::Metrics& metrics, const store::Backend& backend) {
    metrics.set_store_series([&backend] { return backend.metric_families(); });
}

}  // namespace ratelimitd::app
