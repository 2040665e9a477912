// The JSON body of a quota webhook event (docs/operations.md).
#pragma once

#include "ratelimitd/service/crossing_sink.hpp"

#include <string>

namespace ratelimitd::notify {

/// A fresh event id: "evt_" and 32 hex digits of randomness, unique across sidecars.
[[nodiscard]] std::string new_event_id();

/// {"id","type":"threshold","policy","tenant","scope","threshold","limit","used","window_end"},
/// in that order; window_end in epoch seconds (rounded up). For a debt event (c.debt > 0):
/// {"id","type":"debt","policy","tenant","scope","bound","debt","limit","window_end"}. Holds no
/// secret.
[[nodiscard]] std::string event_body(const service::Crossing& c, const std::string& id);

/// The sample event of POST /v1/notify/test: the same shape, for policy "sample" and tenant
/// "sample", so a receiver can be tested without crossing anything.
[[nodiscard]] std::string sample_body(const std::string& id, std::int64_t now_ms);

}  // namespace ratelimitd::notify
