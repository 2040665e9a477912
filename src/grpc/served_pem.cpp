// ServedPem: a memfd per version, written whole, then moved onto the watched descriptor number
// with dup3, which swaps the file that number names in one step.
#include "ratelimitd/grpc/served_pem.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ratelimitd::rls {

namespace {

bool write_all(int fd, const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// A new in-memory file holding `pem`, its modification time `generation` seconds; -1 on failure.
int new_version(const char* name, const std::string& pem, std::int64_t generation) {
    const int fd = ::memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) return -1;
    const timespec times[2] = {{static_cast<time_t>(generation), 0}, {static_cast<time_t>(generation), 0}};
    if (!write_all(fd, pem) || ::futimens(fd, times) != 0) {
        const int why = errno;  // close() must not hide the reason the caller reports
        ::close(fd);
        errno = why;
        return -1;
    }
    return fd;
}

}  // namespace

ServedPem::ServedPem(int fd, const char* name) : fd_(fd), name_(name), path_("/proc/self/fd/" + std::to_string(fd)) {}

result<std::unique_ptr<ServedPem>> ServedPem::create(const char* name, const std::string& pem) {
    const int fd = new_version(name, pem, 1);
    if (fd < 0) return Problem{errc::invalid_request, std::string("grpc_tls: cannot hold the certificates in memory: ") +
                                                          std::strerror(errno)};
    std::unique_ptr<ServedPem> served(new ServedPem(fd, name));
    // gRPC opens the path, so the kernel must let this process open its own descriptors by name.
    if (::access(served->path_.c_str(), R_OK) != 0) {
        return Problem{errc::invalid_request, "grpc_tls: cannot read " + served->path_ + " (is /proc mounted?): " +
                                                  std::strerror(errno)};
    }
    return served;
}

ServedPem::~ServedPem() { ::close(fd_); }

bool ServedPem::replace(const std::string& pem) {
    const int fd = new_version(name_, pem, generation_ + 1);
    if (fd < 0) return false;
    // dup3 closes the old file on fd_ and puts the new one there atomically: an open() of path()
    // gets one or the other.
    const bool moved = ::dup3(fd, fd_, O_CLOEXEC) == fd_;
    ::close(fd);
    if (moved) ++generation_;
    return moved;
}

}  // namespace ratelimitd::rls
