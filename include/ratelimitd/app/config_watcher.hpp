// Notices that the config file changed on disk, however it was replaced: written in place,
// saved by rename (most editors), re-pointed symlink, or a Kubernetes ConfigMap update (the
// mount's `..data` symlink swapped to a new directory).
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace ratelimitd::app {

/// How long the file must have been left alone before it is read. A file written in several
/// steps (`cat a > f; cat b >> f`, a tool that writes and appends) is closed after each step,
/// and a reload at the first close would serve the half-written file (say, the policies
/// without the routes that use them) until the next. 250 ms covers the pause between the
/// steps of a script and keeps a reload prompt; an atomic rename needs no wait at all
/// (docs/operations.md).
inline constexpr std::chrono::milliseconds config_quiet_time{250};

/// Watches the directory that holds the config file with inotify (the file itself may be
/// replaced, so a watch on it would go stale) and calls `on_change` once per batch of events
/// after which the file, followed through symlinks, is a different file or has a different
/// size or modification time. Events about other files in the directory change nothing.
/// A file created empty and then written calls `on_change` when it is closed, not before; and
/// only once no event about the directory (nor a write to the file) has come for `quiet_time`.
/// @par Thread Safety
/// start(), the destructor and `on_change` run on the executor's thread.
class ConfigWatcher {
public:
    ConfigWatcher(boost::asio::any_io_executor executor, std::filesystem::path file, std::function<void()> on_change,
                  std::chrono::milliseconds quiet_time = config_quiet_time);

    /// What tells one version of what is watched from the next; nothing while it cannot be read.
    using Fingerprint = std::function<std::optional<std::string>()>;

    /// Watches `directory` (ERL mode's runtime directory: its files, or the symlink of its root)
    /// and calls `on_change` as above once `fingerprint` differs from the version last seen.
    ConfigWatcher(boost::asio::any_io_executor executor, std::filesystem::path directory, Fingerprint fingerprint,
                  std::function<void()> on_change, std::chrono::milliseconds quiet_time = config_quiet_time);

    /// A file's fingerprint: device, inode, size and modification time, through symlinks.
    static std::optional<std::string> file_identity(const std::filesystem::path& file);
    ~ConfigWatcher();
    ConfigWatcher(const ConfigWatcher&) = delete;
    ConfigWatcher& operator=(const ConfigWatcher&) = delete;

    /// Starts watching. Returns false (and watches nothing) when inotify cannot watch the
    /// directory, e.g. it is gone or the inotify limits are reached. Call once.
    /// `version_read`: the fingerprint taken before what is served was read. A change made
    /// between that read and this call has no event left to tell of it: when the watched
    /// version differs from it, `on_change` is called after the quiet time as for an event.
    bool start(std::optional<std::string> version_read = std::nullopt);

private:
    struct State;
    // Shared with the pending read, which may complete after the watcher is gone.
    std::shared_ptr<State> state_;
};

}  // namespace ratelimitd::app
