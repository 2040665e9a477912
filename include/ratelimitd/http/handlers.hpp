// The endpoint table's handlers: free functions, one file per endpoint family, each given the
// thread's EndpointServices and the call. Each is called with a method its row allows, after
// its row's access rule admitted the caller (router.cpp).
#pragma once

#include "ratelimitd/http/answer.hpp"
#include "ratelimitd/http/endpoints.hpp"

#include <boost/asio/awaitable.hpp>

namespace ratelimitd::http {

class EndpointServices;

namespace handlers {

using Handled = boost::asio::awaitable<Answer>;

/// An answer known without waiting, as a handler that is not a coroutine hands it back.
inline Handled answered(Answer a) { co_return a; }

// The spending doors (check_endpoint.cpp, auth_endpoint.cpp, report_endpoint.cpp): not
// coroutines; a call the road decides at once costs no frame (road::Road::decide).
Handled check(EndpointServices& s, const EndpointCall& call);
Handled auth(EndpointServices& s, const EndpointCall& call);
Handled report(EndpointServices& s, const EndpointCall& call);
// release_endpoint.cpp
Handled release(EndpointServices& s, const EndpointCall& call);

// health_endpoints.cpp
Handled healthz(EndpointServices& s, const EndpointCall& call);
Handled readyz(EndpointServices& s, const EndpointCall& call);
Handled metrics_text(EndpointServices& s, const EndpointCall& call);

// admin_endpoints.cpp: the admin doors that read or forget a policy's state, or its settings.
Handled policies(EndpointServices& s, const EndpointCall& call);
Handled peek(EndpointServices& s, const EndpointCall& call);
Handled reset(EndpointServices& s, const EndpointCall& call);
// envoy_admin_endpoints.cpp
Handled envoy_peek(EndpointServices& s, const EndpointCall& call);
Handled envoy_reset(EndpointServices& s, const EndpointCall& call);
// top_endpoint.cpp, audit_endpoint.cpp, notify_test_endpoint.cpp, status_page.cpp
Handled top(EndpointServices& s, const EndpointCall& call);
Handled audit(EndpointServices& s, const EndpointCall& call);
/// POST /v1/notify/test. Reads {"target":"NAME"} (no other field), sends the target a sample event, signed as every
/// event is, once, and answers 200 {"target","delivered":true,"status"} when it answered 2xx,
/// else 502 {"target","delivered":false,"status" or "detail"}. 400 naming the problem for a body
/// that is not that object or a target that notify.targets does not have. Touches no store.
Handled notify_test(EndpointServices& s, const EndpointCall& call);
Handled status_page(EndpointServices& s, const EndpointCall& call);
/// GET /v1/status/history (status_history_endpoint.cpp): the status page's charts' data.
Handled status_history(EndpointServices& s, const EndpointCall& call);

// erl_endpoints.cpp: envoyproxy/ratelimit's own doors.
Handled healthcheck(EndpointServices& s, const EndpointCall& call);
Handled rls_json(EndpointServices& s, const EndpointCall& call);
Handled rlconfig(EndpointServices& s, const EndpointCall& call);

}  // namespace handlers
}  // namespace ratelimitd::http
