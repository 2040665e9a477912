// PEM text that gRPC's certificate file watcher reads by path, held in memory by us: the
// watcher is the only way gRPC 1.51 takes certificates that change while it serves, and it
// trusts whatever the path holds, so the path it watches is one only checked text reaches.
#pragma once

#include "ratelimitd/core/error.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace ratelimitd::rls {

/// An in-memory file (memfd) named by /proc/self/fd/N. Never on disk (a read-only root file
/// system is fine, and no key is copied to a directory others may list); replaced whole in one
/// step, so a reader sees the old text or the new one, never a mix or an empty file.
/// @par Thread Safety
/// replace() on one thread; path() may be read by any (gRPC's watcher thread opens it).
class ServedPem {
public:
    /// The file holding `pem`, or why one cannot be made (no memfd, no /proc).
    static result<std::unique_ptr<ServedPem>> create(const char* name, const std::string& pem);
    ~ServedPem();
    ServedPem(const ServedPem&) = delete;
    ServedPem& operator=(const ServedPem&) = delete;

    /// "/proc/self/fd/N": what gRPC is told to watch.
    [[nodiscard]] const std::string& path() const noexcept { return path_; }

    /// The text now served; false (nothing changed) when a new file cannot be made.
    bool replace(const std::string& pem);

private:
    ServedPem(int fd, const char* name);

    int fd_;
    const char* name_;
    std::string path_;
    // The modification time given to each version (1, 2, ...): gRPC reads the key and the chain
    // from one path in two reads and starts over when the time differs between them, so two
    // versions written within one second must not share it.
    std::int64_t generation_ = 1;
};

}  // namespace ratelimitd::rls
