// The server threads: each one's io_context, store, service, router and lane.
#pragma once

#include "ratelimitd/grpc/service_lane.hpp"
#include "ratelimitd/http/router.hpp"
#include "ratelimitd/http/server.hpp"
#include "ratelimitd/policy/registry_handle.hpp"
#include "ratelimitd/service/crossing_sink.hpp"
#include "ratelimitd/service/metrics.hpp"
#include "ratelimitd/service/top_board.hpp"
#include "ratelimitd/store/backend.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <vector>

namespace ratelimitd::app {

/// What every thread's request path is built from; all of it outlives the threads.
struct Serving {
    policy::RegistryHandle& registry;
    service::Metrics& metrics;
    const http::RouterOptions& router_options;
    service::TopBoard* top = nullptr;  ///< heavy hitters, each thread's added here; nullptr: off
    service::CrossingSink* crossings = nullptr;  ///< quota webhooks' queue; nullptr: none
};

/// `count` server threads over the stores of one backend, which they own: the backend's
/// stores are destroyed after the threads are joined and before their io_contexts.
/// @par Thread Safety
/// Every member on the main thread.
class ServerThreads {
public:
    ServerThreads(std::unique_ptr<store::Backend> backend, int count, const Serving& serving);
    ~ServerThreads();
    ServerThreads(const ServerThreads&) = delete;
    ServerThreads& operator=(const ServerThreads&) = delete;

    [[nodiscard]] store::Backend& backend() noexcept { return *backend_; }
    [[nodiscard]] const store::Backend& backend() const noexcept { return *backend_; }
    /// One per thread, for the Server to hand sessions to.
    [[nodiscard]] std::vector<http::Lane*> lanes() const;
    /// One per thread, for the gRPC server: each thread's executor and CheckService.
    [[nodiscard]] std::vector<rls::ServiceLane> service_lanes() const;

    /// Runs every thread's io_context, then starts the backend (`main`: the accept thread).
    void start(boost::asio::any_io_executor main);
    /// Stops the backend, then each thread's store on its own thread; joins the threads.
    /// Idempotent; the destructor calls it.
    void stop_and_join();

private:
    struct Worker;

    // Declared first, destroyed last: the stores in backend_ go first, while the io_contexts
    // they are bound to still exist.
    std::vector<std::unique_ptr<Worker>> workers_;
    std::unique_ptr<store::Backend> backend_;
    bool running_ = false;
};

}  // namespace ratelimitd::app
