// One server thread as the gRPC transport sees it: where to run a call, and the road (and
// the service) that decides it there.
#pragma once

#include "ratelimitd/door/doors.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <utility>

namespace ratelimitd::rls {

/// A server thread's io_context (by its executor), the CheckService that lives on it and
/// the doors' road over that service, built once with the lane. Calls run only on
/// `executor`, so the service is never touched by two threads.
struct ServiceLane {
    ServiceLane(boost::asio::any_io_executor executor_, service::CheckService* service_)
        : executor(std::move(executor_)), service(service_), doors(*service_) {}

    boost::asio::any_io_executor executor;
    service::CheckService* service;  ///< the health check's store
    door::Doors doors;               ///< ShouldRateLimit's road (door::Doors::rls)
};

}  // namespace ratelimitd::rls
