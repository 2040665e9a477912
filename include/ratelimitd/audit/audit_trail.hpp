// The audit trail: one JSON line per act that changes what is enforced or gives units back
// (config loads and reloads, resets, refunds) and per admin call, written to the audit log
// (`audit_log`: stderr or a file, apart from the access log) and kept in a bounded ring for
// GET /v1/audit (docs/operations.md, "Audit trail"). The events themselves are typed in
// audit_event.hpp.
#pragma once

#include "ratelimitd/audit/admin_call_coalescer.hpp"
#include "ratelimitd/core/error.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::audit {

/// Who did it. Never a token, a password or any secret: whether the admin token was
/// presented is a yes or no.
struct Actor {
    std::optional<std::string> peer;  ///< the direct TCP peer, the control plane; none: the process itself
    bool token = false;               ///< the call was authorised by the admin bearer token
};

/// One recorded entry: its number (1, 2, ... in this process), its time and the JSON line as
/// written (without the newline).
struct AuditEntry {
    std::uint64_t id = 0;
    std::int64_t epoch_ms = 0;
    std::string event;
    std::string line;
};

/// The entries after a time, oldest first.
struct AuditPage {
    std::vector<AuditEntry> entries;
    bool more = false;  ///< further entries after the last one returned
    std::size_t kept = 0;  ///< entries kept in all
};

/// @par Thread Safety
/// Every member may be called from any thread (server threads record resets, refunds and
/// admin calls; the main thread reloads and reopens).
class AuditTrail {
public:
    /// The entries kept for GET /v1/audit: the last 1,000; older ones stay only in the log.
    static constexpr std::size_t default_capacity = 1000;

    /// Keeps `capacity` entries (at least 1); writes nowhere until open().
    explicit AuditTrail(std::size_t capacity = default_capacity,
                        AdminCallLimits admin_limits = AdminCallLimits{});
    ~AuditTrail();
    AuditTrail(const AuditTrail&) = delete;
    AuditTrail& operator=(const AuditTrail&) = delete;

    /// Writes the entries to `target`: "stderr", or a file path opened for appending (created
    /// 0640 when missing). A path that cannot be opened is an error naming it and the reason.
    result<bool> open(const std::string& target);

    /// Opens the file again (after logrotate moved it: SIGHUP); nothing for stderr or no log.
    /// On failure the old descriptor stays in use and the error names the path.
    result<bool> reopen();

    /// Records one entry: `fields` (an object) after "time", "id", "event" and "actor".
    void record(std::string_view event, const Actor& actor, nlohmann::ordered_json fields);

    /// An admin door's call, allowed (`status` 0) or refused (401, 403), coalesced per peer,
    /// door and outcome by the AdminCallCoalescer so a flood cannot fill the disk.
    void admin_call(const Actor& actor, std::string_view door, std::string_view method, unsigned status);

    /// The kept entries with a time after `since_epoch_ms`, oldest first, at most `limit`.
    [[nodiscard]] AuditPage since(std::int64_t since_epoch_ms, std::size_t limit) const;

    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

    /// Now as the trail stamps entries, and `epoch_ms` as RFC 3339 UTC with milliseconds
    /// ("2026-12-02T13:20:05.123Z").
    static std::int64_t now_epoch_ms();
    static std::string rfc3339(std::int64_t epoch_ms);

private:
    void write_line(const std::string& line);

    const std::size_t capacity_;
    mutable std::mutex mutex_;
    std::deque<AuditEntry> ring_;
    std::uint64_t next_id_ = 1;
    AdminCallCoalescer admin_calls_;
    int fd_ = -1;            ///< -1: no audit log; 2: stderr
    std::string path_;       ///< the file's path; empty for stderr
    std::int64_t last_write_warning_s_ = 0;
};

}  // namespace ratelimitd::audit
