// One server thread as the gRPC transport sees it: where to run a call, and the service
// that decides it there.
#pragma once

#include "ratelimitd/service/check_service.hpp"

#include <boost/asio/any_io_executor.hpp>

namespace ratelimitd::rls {

/// A server thread's io_context (by its executor) and the CheckService that lives on it.
/// Calls run only on `executor`, so the service is never touched by two threads.
struct ServiceLane {
    boost::asio::any_io_executor executor;
    service::CheckService* service = nullptr;
};

}  // namespace ratelimitd::rls
