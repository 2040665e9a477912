// The body of the common check answer, written in one pass: the general JsonWriter path
// (check_answer.cpp) placed a comma, appended and checked capacity per token, some 1,700
// instructions a check for a body whose keys are constants.
#pragma once

#include "ratelimitd/headers/shown_counts.hpp"
#include "ratelimitd/http/types.hpp"
#include "ratelimitd/service/check_service.hpp"

namespace ratelimitd::http {

/// Writes the JSON body of a decided check of one window into `out`, the bytes the
/// JsonWriter path writes for it: {"allowed", "policy", "tenant", "scope", "limit",
/// "remaining", "reset", "retry_after"}, then "delay_ms", "shadow_denied" and
/// "on_store_error" where they apply. False, `out` untouched, for any other shape: several
/// windows, a lease, or a policy, tenant or scope holding a byte JSON escapes or one of 0x80
/// and above (UTF-8 to check): the caller writes those with the JsonWriter.
/// The limit, remaining, reset and retry_after shown are `shown`'s (the header lines' too).
bool write_one_window_check_body(const service::Decision& d, const headers::ShownCounts& shown, PooledString& out);

}  // namespace ratelimitd::http
