// AuditTrail: render, write (one write(2) per line), keep in the ring.
#include "ratelimitd/audit/audit_trail.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace ratelimitd::audit {

namespace {

using json = nlohmann::ordered_json;

int open_for_append(const std::string& path) {
    return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
}

Problem cannot_open(const std::string& path, int error) {
    return Problem{errc::invalid_request, "audit_log: cannot open " + path + " for appending: " + std::strerror(error)};
}

json actor_json(const Actor& actor) {
    return {{"peer", actor.peer ? json(*actor.peer) : json(nullptr)}, {"token", actor.token}};
}

}  // namespace

AuditTrail::AuditTrail(std::size_t capacity, AdminCallLimits admin_limits)
    : capacity_(capacity == 0 ? 1 : capacity), admin_calls_(admin_limits) {}

AuditTrail::~AuditTrail() {
    if (fd_ > 2) ::close(fd_);
}

result<bool> AuditTrail::open(const std::string& target) {
    std::lock_guard lock(mutex_);
    if (target == "stderr") {
        if (fd_ > 2) ::close(fd_);
        fd_ = 2;
        path_.clear();
        return true;
    }
    const int fd = open_for_append(target);
    if (fd < 0) return cannot_open(target, errno);
    if (fd_ > 2) ::close(fd_);
    fd_ = fd;
    path_ = target;
    return true;
}

result<bool> AuditTrail::reopen() {
    std::lock_guard lock(mutex_);
    if (path_.empty()) return false;
    const int fd = open_for_append(path_);
    if (fd < 0) return cannot_open(path_, errno);
    ::close(fd_);
    fd_ = fd;
    return true;
}

void AuditTrail::record(std::string_view event, const Actor& actor, json fields) {
    const auto now_ms = now_epoch_ms();
    AuditEntry entry;
    {
        std::lock_guard lock(mutex_);
        entry.id = next_id_++;
        entry.epoch_ms = now_ms;
        entry.event = std::string(event);
        json line = {{"time", rfc3339(now_ms)}, {"id", entry.id}, {"event", entry.event}, {"actor", actor_json(actor)}};
        if (fields.is_object()) line.update(fields);
        // Replacement characters for invalid UTF-8: a peer's bytes never break the line.
        entry.line = line.dump(-1, ' ', false, json::error_handler_t::replace);
        write_line(entry.line);
        ring_.push_back(entry);
        if (ring_.size() > capacity_) ring_.pop_front();
    }
}

void AuditTrail::admin_call(const Actor& actor, std::string_view door, std::string_view method, unsigned status) {
    const std::string outcome = status == 0 ? "allowed" : std::to_string(status);
    AdminCallNote note;
    {
        std::lock_guard lock(mutex_);
        const std::string key =
            actor.peer.value_or("") + '\n' + std::string(door) + '\n' + std::string(method) + '\n' + outcome;
        note = admin_calls_.note(key, now_epoch_ms());
    }
    if (!note.write) return;
    json fields = {{"door", door}, {"method", method}};
    if (status != 0) fields["status"] = status;
    fields["repeats"] = note.repeats;
    fields["unlogged"] = note.unlogged;
    record(status == 0 ? "admin_call" : "admin_refused", actor, std::move(fields));
}

AuditPage AuditTrail::since(std::int64_t since_epoch_ms, std::size_t limit) const {
    AuditPage page;
    std::lock_guard lock(mutex_);
    page.kept = ring_.size();
    for (const auto& entry : ring_) {
        if (entry.epoch_ms <= since_epoch_ms) continue;
        if (page.entries.size() == limit) {
            page.more = true;
            break;
        }
        page.entries.push_back(entry);
    }
    return page;
}

std::int64_t AuditTrail::now_epoch_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string AuditTrail::rfc3339(std::int64_t epoch_ms) {
    const std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char text[40];
    const auto n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
    std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(epoch_ms % 1000));
    return text;
}

// Under the lock: one write per line, so lines from several threads never interleave (and on
// stderr a line shorter than PIPE_BUF is not split by the log's own lines).
void AuditTrail::write_line(const std::string& line) {
    if (fd_ < 0) return;
    const std::string out = line + "\n";
    std::size_t done = 0;
    while (done < out.size()) {
        const auto n = ::write(fd_, out.data() + done, out.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            // A full disk must not stop the service; said at most once a minute.
            const auto now_s = now_epoch_ms() / 1000;
            if (now_s - last_write_warning_s_ >= 60) {
                last_write_warning_s_ = now_s;
                spdlog::warn("audit_log: cannot write to {}: {}", path_.empty() ? "stderr" : path_,
                             std::strerror(errno));
            }
            return;
        }
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace ratelimitd::audit
