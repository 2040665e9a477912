// The metrics a store backend reports, read at each scrape.
#pragma once

#include "ratelimitd/service/metrics.hpp"
#include "ratelimitd/store/backend.hpp"

namespace ratelimitd::app {

/// Makes `metrics` read `backend`'s series (Backend::metric_families) at each scrape: the
/// open breakers always, and each part of BackendStats the backend has (connections,
/// batching, Cluster redirects, embedded keys); the series of parts it lacks are not
/// rendered. `backend` must outlive every scrape.
void report_backend_stats(service::Metrics& metrics, const store::Backend& backend);

}  // namespace ratelimitd::app
