// One server thread as the gRPC transport sees it: where to run a call, and the road (and
// the service) that decides it there.
#pragma once

#include "ratelimitd/road/road.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <utility>

namespace ratelimitd::rls {

/// A server thread's io_context (by its executor) and the road over the CheckService that
/// lives on it, built once with the lane. Calls run only on `executor`, so the service is
/// never touched by two threads.
struct ServiceLane {
    ServiceLane(boost::asio::any_io_executor executor_, service::CheckService* service)
        : executor(std::move(executor_)), road(*service) {}

    boost::asio::any_io_executor executor;
    road::Road road;  ///< ShouldRateLimit's (Ask::rls) and the health check's (registry, ready)
};

}  // namespace ratelimitd::rls
