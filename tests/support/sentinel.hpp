// A private redis-server in sentinel mode for integration tests, on a free loopback port.
#pragma once

#include "support/processes.hpp"

#include <string>
#include <vector>

namespace ratelimitd::test {

/// `redis-server <conf> --sentinel` monitoring the master `name` at 127.0.0.1:`master_port`
/// with quorum 1, down-after 1 s and failover-timeout 3 s. Its conf is a writable scratch
/// file (a sentinel rewrites its own conf). Stopped when the object dies.
class RedisSentinel {
public:
    RedisSentinel(std::string name, unsigned short master_port);
    unsigned short port() const { return port_; }
    const std::string& name() const { return name_; }
    /// The sentinel URL for ratelimitd: redis-sentinel://127.0.0.1:<port>/<name>.
    std::string url() const;
    /// `SENTINEL get-master-addr-by-name <name>` as "host:port", or "" when it has none.
    std::string master_address() const;
    /// Runs one command against the sentinel; the reply flattened to words (nested arrays too).
    std::string command(const std::vector<std::string>& argv) const;

private:
    std::string name_;
    unsigned short port_;
    Child child_;
};

/// Runs one command on the Redis at 127.0.0.1:`port`; the reply flattened to words, nested
/// arrays included ("(error) ..." when it cannot connect).
std::string redis_command(unsigned short port, const std::vector<std::string>& argv);

}  // namespace ratelimitd::test
