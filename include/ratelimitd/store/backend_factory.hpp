// The one place that knows which store backends exist: the list of their registrations
// (backend_kind.hpp), and what the rest of the process asks of it.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/store/backend.hpp"
#include "ratelimitd/store/backend_kind.hpp"

#include <memory>
#include <optional>
#include <span>
#include <string>

namespace ratelimitd::store {

/// Every backend's registration, in the order --help lists them.
std::span<const BackendKind* const> backend_kinds() noexcept;

/// The kind a store URL names (none: the store of no URL), or nullptr when no kind takes it.
const BackendKind* backend_kind_of(const std::optional<std::string>& url) noexcept;

/// The backend a store URL names: none, the embedded store; redis:// a single Redis;
/// redis-sentinel:// a Redis whose primary the sentinels name; redis-cluster:// a Redis
/// Cluster. A URL that does not parse fails with invalid_request naming what is wrong (never
/// the password). Never throws.
result<std::unique_ptr<Backend>> make_backend(const std::optional<std::string>& url, BackendOptions options);

/// What the backend of `url` refuses of `registry`, known without connecting (--check-config),
/// or nothing. A URL no kind takes: nothing (its setting says what is wrong).
std::optional<std::string> registry_refusal(const std::optional<std::string>& url, const policy::Registry& registry);

/// The --help lines of every backend's URL forms, in list order.
std::string backend_usage();

}  // namespace ratelimitd::store
