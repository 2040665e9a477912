// The gRPC connections handed to gRPC and not yet closed by it, for the connection cap.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include <sys/types.h>

namespace ratelimitd::rls {

/// Counts the connections a GrpcListener handed to gRPC. gRPC says nothing when it closes
/// one (after its idle or age timeout, or the peer's close), so the ledger keeps each
/// descriptor with the identity of its socket (device and inode, unique among open sockets)
/// and forgets the entries whose descriptor is closed or now names another file.
/// @par Thread Safety
/// One thread (the accepting one).
class ConnectionLedger {
public:
    /// At most `cap` connections are admitted at once (cap >= 1).
    explicit ConnectionLedger(std::size_t cap) : cap_(cap) {}

    /// Records the accepted socket `fd` when fewer than the cap are open; false (nothing
    /// recorded) when the cap is reached. Looks for closed entries only when at the cap, and
    /// then at most once per `rescan_interval`, so a flood at the cap costs no scan per
    /// connection.
    bool admit(int fd);

    /// The connections still open, after forgetting the closed ones.
    std::size_t open();

    [[nodiscard]] std::size_t cap() const noexcept { return cap_; }

    static constexpr std::chrono::milliseconds rescan_interval{50};

private:
    struct Entry {
        int fd;
        dev_t device;
        ino_t inode;
    };
    void forget_closed();

    std::size_t cap_;
    std::vector<Entry> entries_;
    std::chrono::steady_clock::time_point scanned_{};
};

}  // namespace ratelimitd::rls
