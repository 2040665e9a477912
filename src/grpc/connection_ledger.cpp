// ConnectionLedger: fstat per entry tells a connection gRPC still holds from a closed one.
#include "ratelimitd/grpc/connection_ledger.hpp"

#include <sys/stat.h>

#include <algorithm>

namespace ratelimitd::rls {

namespace {

// Device and inode of what `fd` names; false when it names nothing.
bool identity_of(int fd, dev_t& device, ino_t& inode) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
    device = st.st_dev;
    inode = st.st_ino;
    return true;
}

}  // namespace

bool ConnectionLedger::admit(int fd) {
    if (entries_.size() >= cap_) {
        const auto now = std::chrono::steady_clock::now();
        if (now - scanned_ < rescan_interval) return false;
        scanned_ = now;
        forget_closed();
        if (entries_.size() >= cap_) return false;
    }
    Entry e{fd, 0, 0};
    if (!identity_of(fd, e.device, e.inode)) return false;
    // A number gRPC closed may come back for this very connection: the old entry is stale.
    std::erase_if(entries_, [fd](const Entry& old) { return old.fd == fd; });
    entries_.push_back(e);
    return true;
}

std::size_t ConnectionLedger::open() {
    forget_closed();
    return entries_.size();
}

void ConnectionLedger::forget_closed() {
    // A closed descriptor fails fstat; a reused one names another socket (another inode).
    std::erase_if(entries_, [](const Entry& e) {
        dev_t device = 0;
        ino_t inode = 0;
        return !identity_of(e.fd, device, inode) || device != e.device || inode != e.inode;
    });
}

}  // namespace ratelimitd::rls
