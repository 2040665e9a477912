// /v1/auth's delayed checks: the answer held for its delay, within max_held_requests.
#pragma once

#include "ratelimitd/http/answer.hpp"
#include "ratelimitd/http/endpoint_services.hpp"
#include "ratelimitd/road/call.hpp"

#include <cstdint>

namespace ratelimitd::http {

/// The answer to a check admitted with a delay of `delay_ms` (its reservation charged): `res`
/// to be held that long by the session, when fewer than max_held_requests are held and fewer
/// than its max_held for each policy that delayed it; else the door's denial (deny_status,
/// Retry-After the delay in whole seconds), counted in ratelimitd_held_refused_total by policy
/// and bound. The reservation stands either way, as it does in nginx.
Answer hold_or_refuse(EndpointServices& s, const road::Call& c, const Request& req, Answer res,
                      std::int64_t delay_ms);

}  // namespace ratelimitd::http
