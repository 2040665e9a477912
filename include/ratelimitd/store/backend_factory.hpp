// The one place that knows which store backends exist.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/store/backend.hpp"

#include <memory>
#include <optional>
#include <string>

namespace ratelimitd::store {

/// The backend a store URL names: none, the embedded store; redis:// a single Redis;
/// redis-sentinel:// a Redis whose primary the sentinels name; redis-cluster:// a Redis
/// Cluster. A URL that does not parse fails with invalid_request naming what is wrong (never
/// the password). Never throws.
result<std::unique_ptr<Backend>> make_backend(const std::optional<std::string>& url, BackendOptions options);

}  // namespace ratelimitd::store
