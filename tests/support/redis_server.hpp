// A private redis-server for a test, and one-shot commands to any Redis on the loopback.
#pragma once

#include "support/child.hpp"

#include <string>
#include <vector>

namespace ratelimitd::test {

/// redis-server on a free loopback port, no persistence; with `password`, it requires AUTH
/// (requirepass), url() carries the password and command() authenticates first.
class RedisServer {
public:
    explicit RedisServer(std::string password = {});
    /// With `extra_args` appended to the command line (e.g. {"--replicaof", "127.0.0.1", "6379"}).
    RedisServer(std::string password, std::vector<std::string> extra_args);
    unsigned short port() const { return port_; }
    std::string url() const {
        return "redis://" + (password_.empty() ? "" : ":" + password_ + "@") + "127.0.0.1:" + std::to_string(port_);
    }
    /// Runs one command and returns the reply flattened to text ("(nil)", "1", "a b c"...).
    std::string command(const std::vector<std::string>& argv) const;
    long long integer(const std::vector<std::string>& argv) const;
    std::vector<std::string> keys() const;
    void kill_hard();        ///< SIGKILL
    void restart();          ///< same port, empty
    void pause();            ///< SIGSTOP
    void resume();           ///< SIGCONT

private:
    void start();
    unsigned short port_;
    std::string password_;
    std::vector<std::string> extra_args_;
    Child child_;
};

/// Runs one command on the redis-server at 127.0.0.1:`port` (AUTH first with `password`) and
/// returns the reply flattened as RedisServer::command does; redirects are not followed.
std::string redis_command(unsigned short port, const std::string& password, const std::vector<std::string>& argv);

}  // namespace ratelimitd::test
