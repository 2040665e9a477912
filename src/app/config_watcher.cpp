// ConfigWatcher: inotify on the config file's directory, read through an Asio descriptor.
#include "ratelimitd/app/config_watcher.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>

namespace ratelimitd::app {

namespace {

/// What tells one version of a file from the next: a rename or a new ConfigMap directory gives
/// another inode, a write in place another size or modification time. Nothing when it is gone.
std::optional<std::string> identity_of(const std::filesystem::path& file) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) return std::nullopt;  // follows symlinks (..data)
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// Closed after writing, renamed into place, or a symlink created over it complete a version.
// IN_MODIFY never does (a file being written is only complete when it is closed); on the file
// itself it only says that a write is still going on.
// A file deleted or moved away completes a version too: a runtime directory (ERL mode) without it.
constexpr std::uint32_t watched_events =
    IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_MODIFY | IN_DELETE | IN_MOVED_FROM;

/// What a batch of events says about the file.
enum class Activity {
    none,      ///< nothing about it
    writing,   ///< the file itself is being written: a pending reload waits on
    complete,  ///< some file may be complete: reload once the directory has been quiet
};

/// A regular file created is still empty (its IN_CLOSE_WRITE follows), a symlink is whole.
Activity activity_of(const std::filesystem::path& dir, const std::string& own_name, const char* events,
                     std::size_t length) {
    Activity seen = Activity::none;
    for (std::size_t at = 0; at + sizeof(inotify_event) <= length;) {
        inotify_event event;
        std::memcpy(&event, events + at, sizeof event);
        const char* name = events + at + sizeof(inotify_event);
        std::error_code ec;
        if ((event.mask & (IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_Q_OVERFLOW)) ||
            ((event.mask & IN_CREATE) && event.len > 0 && std::filesystem::is_symlink(dir / name, ec))) {
            seen = Activity::complete;
        } else if ((event.mask & IN_MODIFY) && event.len > 0 && own_name == name && seen == Activity::none) {
            seen = Activity::writing;
        }
        at += sizeof(inotify_event) + event.len;
    }
    return seen;
}

}  // namespace

struct ConfigWatcher::State {
    boost::asio::posix::stream_descriptor inotify;
    boost::asio::steady_timer quiet;
    std::chrono::milliseconds quiet_time;
    std::filesystem::path dir;
    std::string own_name;  // the watched file's name; empty when a whole directory is watched
    ConfigWatcher::Fingerprint fingerprint;
    std::function<void()> on_change;
    std::optional<std::string> last_seen;
    bool pending = false;  // a version completed; the quiet timer runs
    bool stopped = false;  // the watcher is gone: a read already completed must not call on_change
    alignas(inotify_event) std::array<char, 16 * 1024> buffer{};

    State(boost::asio::any_io_executor ex, std::filesystem::path d, std::string name, ConfigWatcher::Fingerprint fp,
          std::function<void()> cb, std::chrono::milliseconds quiet_for)
        : inotify(ex), quiet(ex), quiet_time(quiet_for), dir(std::move(d)), own_name(std::move(name)),
          fingerprint(std::move(fp)), on_change(std::move(cb)), last_seen(fingerprint()) {}

    static void read_next(const std::shared_ptr<State>& self) {
        self->inotify.async_read_some(boost::asio::buffer(self->buffer),
                                      [self](boost::system::error_code ec, std::size_t length) {
                                          if (ec || self->stopped) return;  // closed by the destructor
                                          const auto seen =
                                              activity_of(self->dir, self->own_name, self->buffer.data(), length);
                                          if (seen == Activity::complete || (seen == Activity::writing && self->pending)) {
                                              wait_for_quiet(self);
                                          }
                                          read_next(self);
                                      });
    }

    // (Re)starts the quiet time: each event pushes the reload back, so a file written in
    // several steps (`cat a > f; cat b >> f`) is read once, whole, after its last step.
    static void wait_for_quiet(const std::shared_ptr<State>& self) {
        self->pending = true;
        self->quiet.expires_after(self->quiet_time);  // cancels the wait armed before
        self->quiet.async_wait([self](boost::system::error_code ec) {
            if (ec || self->stopped) return;  // pushed back by a later event, or the watcher is gone
            self->pending = false;
            self->check_file();
        });
    }

    // Which file an event names does not matter: with a ConfigMap the event is about `..data`,
    // not the file. The file is compared with the version last seen, so a burst of events
    // gives one call and events about other files none.
    void check_file() {
        auto now = fingerprint();
        if (!now || now == last_seen) return;  // gone (mid-swap) or unchanged: keep serving
        last_seen = now;
        on_change();
    }
};

namespace {

std::filesystem::path with_directory(std::filesystem::path file) {
    return file.parent_path().empty() ? std::filesystem::path(".") / file : file;
}

}  // namespace

ConfigWatcher::ConfigWatcher(boost::asio::any_io_executor executor, std::filesystem::path file,
                             std::function<void()> on_change, std::chrono::milliseconds quiet_time) {
    file = with_directory(std::move(file));
    auto fingerprint = [file] { return identity_of(file); };
    state_ = std::make_shared<State>(std::move(executor), file.parent_path(), file.filename().string(),
                                     std::move(fingerprint), std::move(on_change), quiet_time);
}

ConfigWatcher::ConfigWatcher(boost::asio::any_io_executor executor, std::filesystem::path directory,
                             Fingerprint fingerprint, std::function<void()> on_change,
                             std::chrono::milliseconds quiet_time)
    : state_(std::make_shared<State>(std::move(executor), std::move(directory), std::string(),
                                     std::move(fingerprint), std::move(on_change), quiet_time)) {}

std::optional<std::string> ConfigWatcher::file_identity(const std::filesystem::path& file) {
    return identity_of(file);
}

ConfigWatcher::~ConfigWatcher() {
    state_->stopped = true;
    boost::system::error_code ignored;
    state_->inotify.close(ignored);  // the pending read completes as aborted
    state_->quiet.cancel();          // and so does the quiet time
}

bool ConfigWatcher::start(std::optional<std::string> version_read) {
    const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return false;
    if (::inotify_add_watch(fd, state_->dir.c_str(), watched_events) < 0) {
        ::close(fd);
        return false;
    }
    state_->inotify.assign(fd);
    State::read_next(state_);
    // Compared once the watch is armed: a change from here on has its event.
    if (version_read && version_read != state_->fingerprint()) {
        state_->last_seen = std::move(version_read);
        State::wait_for_quiet(state_);
    }
    return true;
}

}  // namespace ratelimitd::app
