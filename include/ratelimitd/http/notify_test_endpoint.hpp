// POST /v1/notify/test: a sample quota webhook event to one target (an admin endpoint).
#pragma once

#include "ratelimitd/http/types.hpp"
#include "ratelimitd/service/check_service.hpp"

#include <boost/asio/awaitable.hpp>

namespace ratelimitd::http {

/// Reads {"target":"NAME"} (no other field), sends the target a sample event, signed as every
/// event is, once, and answers 200 {"target","delivered":true,"status"} when it answered 2xx,
/// else 502 {"target","delivered":false,"status" or "detail"}. 400 naming the problem for a body
/// that is not that object or a target that notify.targets does not have. Touches no store.
boost::asio::awaitable<Response> answer_notify_test(const Request& req, service::CheckService& service);

}  // namespace ratelimitd::http
