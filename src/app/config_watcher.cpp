// ConfigWatcher: inotify on the config file's directory, read through an Asio descriptor.
#include "ratelimitd/app/config_watcher.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>

namespace ratelimitd::app {

namespace {

/// What tells one version of the file from the next: a rename or a new ConfigMap directory
/// gives another inode, a write in place another size or modification time.
struct FileIdentity {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    timespec modified{};

    bool operator==(const FileIdentity& o) const {
        return device == o.device && inode == o.inode && size == o.size &&
               modified.tv_sec == o.modified.tv_sec && modified.tv_nsec == o.modified.tv_nsec;
    }
};

std::optional<FileIdentity> identity_of(const std::filesystem::path& file) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) return std::nullopt;  // follows symlinks (..data)
    return FileIdentity{st.st_dev, st.st_ino, st.st_size, st.st_mtim};
}

// Closed after writing, renamed into place, or a symlink created over it. Not IN_MODIFY: a
// file being written is only complete when it is closed.
constexpr std::uint32_t watched_events = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE;

/// Whether a batch of events may have completed a new version of some file in `dir`: a
/// regular file created is still empty (its IN_CLOSE_WRITE follows), a symlink is whole.
bool completes_a_file(const std::filesystem::path& dir, const char* events, std::size_t length) {
    bool completes = false;
    for (std::size_t at = 0; at + sizeof(inotify_event) <= length;) {
        inotify_event event;
        std::memcpy(&event, events + at, sizeof event);
        const char* name = events + at + sizeof(inotify_event);
        if (event.mask & (IN_CLOSE_WRITE | IN_MOVED_TO | IN_Q_OVERFLOW)) completes = true;
        if ((event.mask & IN_CREATE) && event.len > 0) {
            std::error_code ec;
            completes = completes || std::filesystem::is_symlink(dir / name, ec);
        }
        at += sizeof(inotify_event) + event.len;
    }
    return completes;
}

}  // namespace

struct ConfigWatcher::State {
    boost::asio::posix::stream_descriptor inotify;
    std::filesystem::path file;
    std::function<void()> on_change;
    std::optional<FileIdentity> last_seen;
    bool stopped = false;  // the watcher is gone: a read already completed must not call on_change
    alignas(inotify_event) std::array<char, 16 * 1024> buffer{};

    State(boost::asio::any_io_executor ex, std::filesystem::path f, std::function<void()> cb)
        : inotify(std::move(ex)), file(std::move(f)), on_change(std::move(cb)), last_seen(identity_of(file)) {}

    static void read_next(const std::shared_ptr<State>& self) {
        self->inotify.async_read_some(boost::asio::buffer(self->buffer),
                                      [self](boost::system::error_code ec, std::size_t length) {
                                          if (ec || self->stopped) return;  // closed by the destructor
                                          if (completes_a_file(self->file.parent_path(), self->buffer.data(), length)) {
                                              self->check_file();
                                          }
                                          read_next(self);
                                      });
    }

    // Which file an event names does not matter: with a ConfigMap the event is about `..data`,
    // not the file. The file is compared with the version last seen, so a burst of events
    // gives one call and events about other files none.
    void check_file() {
        auto now = identity_of(file);
        if (!now || now == last_seen) return;  // gone (mid-swap) or unchanged: keep serving
        last_seen = now;
        on_change();
    }
};

ConfigWatcher::ConfigWatcher(boost::asio::any_io_executor executor, std::filesystem::path file,
                             std::function<void()> on_change)
    : state_(std::make_shared<State>(std::move(executor), std::move(file), std::move(on_change))) {}

ConfigWatcher::~ConfigWatcher() {
    state_->stopped = true;
    boost::system::error_code ignored;
    state_->inotify.close(ignored);  // the pending read completes as aborted
}

bool ConfigWatcher::start() {
    const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return false;
    if (state_->file.parent_path().empty()) state_->file = std::filesystem::path(".") / state_->file;
    const auto dir = state_->file.parent_path();
    if (::inotify_add_watch(fd, dir.c_str(), watched_events) < 0) {
        ::close(fd);
        return false;
    }
    state_->inotify.assign(fd);
    State::read_next(state_);
    return true;
}

}  // namespace ratelimitd::app
