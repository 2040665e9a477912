// The JSON body of a quota webhook event (docs/operations.md, docs/schema/usage-event.schema.json).
#pragma once

#include "ratelimitd/service/crossing_sink.hpp"

#include <string>

namespace ratelimitd::notify {

/// A fresh event id: "evt_" and 32 hex digits of randomness, unique across sidecars (the
/// sample event's).
[[nodiscard]] std::string new_event_id();

/// The id of the event of `c`: "evt_" and 32 hex digits of SHA-256 over its policy, window,
/// tenant, scope, window end and threshold (or debt bound), so the same for every attempt and
/// every sidecar, and different for the 80 % and the 100 % events of one window.
[[nodiscard]] std::string event_id(const service::Crossing& c);

/// {"id","type":"threshold","policy","plan","tenant","scope","window":{"name","seconds"},
/// "window_start","window_end","crossed_at","threshold","limit","used"}, in that order; times
/// in epoch seconds (window_end rounded up; window_start, the end less the window's length,
/// and crossed_at rounded down); plan null when the tenant has none. For a debt event (c.debt > 0):
/// the same up to crossed_at, then "bound","debt","limit". Holds no secret.
[[nodiscard]] std::string event_body(const service::Crossing& c, const std::string& id);

/// The sample event of POST /v1/notify/test: the same shape, for policy, plan, tenant and
/// window "sample", so a receiver can be tested without crossing anything.
[[nodiscard]] std::string sample_body(const std::string& id, std::int64_t now_ms);

}  // namespace ratelimitd::notify
