// How a Redis store writes the state of an algorithm that has two layouts (redis_state_layout).
#pragma once

namespace ratelimitd::store {

/// The layout lua/token_bucket.lua writes a bucket in. It reads both, whatever this says, so a
/// fleet moves from one to the other in two rolling deploys (docs/operations.md, "Upgrading").
enum class StateLayout {
    string,  ///< one string "tb:<level>:<ms>:<window_ms>:<burst>": a GET per check, a SET per admit
    hash,    ///< the hash {l, t, w, b} of earlier versions, which they read (a string is foreign to them)
};

}  // namespace ratelimitd::store
