// GET /v1/audit?since=&limit=: the audit entries the process keeps (audit/audit_trail.hpp).
#pragma once

#include "ratelimitd/audit/audit_trail.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/http/types.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ratelimitd::http {

/// Entries one answer holds by default and at most: the whole ring fits in one answer.
inline constexpr std::size_t audit_default_limit = 100;
inline constexpr std::size_t audit_max_limit = audit::AuditTrail::default_capacity;

struct AuditQuery {
    std::int64_t since_epoch_ms = -1;  ///< entries after this instant; -1: every kept entry
    std::size_t limit = audit_default_limit;
};

/// `since` as RFC 3339 ("2026-12-02T13:20:00Z", a fraction and a "+02:00" offset allowed) or
/// epoch seconds ("1764681600", "1764681600.250"), in epoch milliseconds; an invalid_request
/// naming the field otherwise.
result<std::int64_t> parse_audit_since(std::string_view text);

/// The query: `since` as above, `limit` 1..audit_max_limit; another parameter, or one given
/// twice, is an invalid_request naming it.
result<AuditQuery> parse_audit_query(std::string_view query);

/// {"entries": [...oldest first...], "more": bool, "kept": n, "capacity": n}: the kept entries
/// after `since`, at most `limit`; `more` says a later call with `since` = the last entry's
/// time (or a larger limit) gets further ones. 400 for a bad query. No store work.
Response answer_audit(const Request& req, const audit::AuditTrail& trail);

}  // namespace ratelimitd::http
