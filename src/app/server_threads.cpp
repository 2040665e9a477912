// ServerThreads: one io_context per thread, its request path, start and an orderly stop.
#include "ratelimitd/app/server_threads.hpp"

#include "ratelimitd/service/check_service.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <optional>
#include <thread>

namespace ratelimitd::app {

namespace net = boost::asio;

/// One server thread: its io_context and everything that runs on it.
/// Destroyed in an order that keeps every object alive while handlers that use it may run.
struct ServerThreads::Worker {
    std::unique_ptr<service::CheckService> service;
    std::unique_ptr<http::Router> router;
    std::unique_ptr<http::Lane> lane;
    std::optional<net::io_context> ioc;
    std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
    std::thread thread;

    // The request path over `store`: how services and routers are made, in one place.
    void build_request_path(store::Store& store, const Serving& serving) {
        service::ThreadTop* top = serving.top != nullptr ? &serving.top->add_thread(ioc->get_executor()) : nullptr;
        service = std::make_unique<service::CheckService>(serving.registry, store, serving.metrics, top);
        service->set_crossing_sink(serving.crossings);
        router = std::make_unique<http::Router>(*service, serving.metrics, serving.router_options);
        lane = std::make_unique<http::Lane>(*ioc, *router, serving.metrics);
    }

    ~Worker() {
        ioc.reset();  // destroys handlers never run (they may touch the lane)
    }
};

ServerThreads::ServerThreads(std::unique_ptr<store::Backend> backend, int count, const Serving& serving)
    : backend_(std::move(backend)) {
    for (int i = 0; i < count; ++i) {
        auto w = std::make_unique<Worker>();
        w->ioc.emplace(1);
        w->work.emplace(w->ioc->get_executor());
        w->build_request_path(backend_->add_thread(w->ioc->get_executor()), serving);
        workers_.push_back(std::move(w));
    }
}

ServerThreads::~ServerThreads() { stop_and_join(); }

std::vector<http::Lane*> ServerThreads::lanes() const {
    std::vector<http::Lane*> lanes;
    for (const auto& w : workers_) lanes.push_back(w->lane.get());
    return lanes;
}

std::vector<rls::ServiceLane> ServerThreads::service_lanes() const {
    std::vector<rls::ServiceLane> lanes;
    for (const auto& w : workers_) lanes.push_back({w->ioc->get_executor(), w->service.get()});
    return lanes;
}

void ServerThreads::start(net::any_io_executor main) {
    running_ = true;
    for (auto& w : workers_) {
        w->thread = std::thread([ioc = &*w->ioc] { ioc->run(); });
    }
    backend_->start(std::move(main));
}

void ServerThreads::stop_and_join() {
    if (!running_) return;
    running_ = false;
    backend_->stop();  // no more posts to the threads (a Sentinel's retargets)
    // Let each worker finish its own shutdown on its own thread, then join.
    for (std::size_t i = 0; i < workers_.size(); ++i) {
        net::post(*workers_[i]->ioc, [this, i, w = workers_[i].get()] {
            backend_->stop_thread(i);
            w->work.reset();
            w->ioc->stop();
        });
    }
    for (auto& w : workers_) {
        if (w->thread.joinable()) w->thread.join();
    }
}

}  // namespace ratelimitd::app
