// Maps method + path to a handler; answers 404 and 405 for the rest.
#pragma once

#include "ratelimitd/http/types.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <boost/asio/awaitable.hpp>

namespace ratelimitd::http {

/// The endpoints of one server thread:
///   POST|GET /v1/check   decide a check (contract §2)
///   GET      /healthz    200 while the process runs
///   GET      /readyz     200 when the store answers, else 503
/// Anything else: 404 not_found, or 405 method_not_allowed (with Allow) on a known path.
class Router {
public:
    explicit Router(service::CheckService& service) : service_(service) {}

    /// Answers one request. Never throws; completes on the caller's executor.
    boost::asio::awaitable<Response> handle(Request req);

private:
    boost::asio::awaitable<Response> check(const Request& req);
    boost::asio::awaitable<Response> readyz(const Request& req);

    service::CheckService& service_;
};

}  // namespace ratelimitd::http
