// Real servers for integration tests: a private redis-server and the ratelimitd binary,
// each on a free loopback port, stopped when the object dies.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <sys/types.h>

namespace ratelimitd::test {

/// A loopback port that is free and stays reserved for this test process (see processes.cpp).
unsigned short free_port();

/// True when something accepts connections on 127.0.0.1:`port`.
bool can_connect(unsigned short port);

/// A child process with its stderr (and stdout) captured to a file.
class Child {
public:
    Child() = default;
    Child(const std::vector<std::string>& argv, const std::string& log_path,
          const std::vector<std::string>& extra_env = {});
    ~Child();
    Child(Child&& other) noexcept;
    Child& operator=(Child&& other) noexcept;

    pid_t pid() const { return pid_; }
    bool running();
    void signal(int sig) const;
    /// Waits for exit; returns the exit code, 128+signal when killed, -1 on timeout.
    int wait(std::chrono::milliseconds timeout);
    /// Everything the process logged so far.
    std::string log() const;
    /// Waits until the log holds a line containing `text`; returns that line, or "" on timeout.
    std::string wait_for_log(const std::string& text, std::chrono::milliseconds timeout) const;

private:
    pid_t pid_ = -1;
    std::string log_path_;
};

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

/// How a RedisCluster is set up.
struct RedisClusterOptions {
    int primaries = 3;
    /// Replicas per primary (redis-cli --cluster create --cluster-replicas N).
    int replicas_per_primary = 0;
    /// cluster-node-timeout; 0 keeps Redis's default (15 s). A failover test wants ~1 s.
    std::chrono::milliseconds node_timeout{0};
    /// With a password every node has requirepass and masterauth, url() carries it and
    /// command() authenticates first.
    std::string password;
    /// cluster-require-full-coverage: with yes (Redis's default) every node answers CLUSTERDOWN
    /// while any slot is uncovered (a failed primary not yet replaced).
    bool require_full_coverage = true;
};

/// A Redis Cluster of redis-server processes on free loopback ports, created with
/// `redis-cli --cluster create`: nodes 0..primaries-1 are the primaries, the rest their
/// replicas. The constructor returns once every node reports cluster_state:ok, agrees on the
/// owner of every slot, and every replica's link to its primary is up.
class RedisCluster {
public:
    explicit RedisCluster(int primaries = 3, int replicas_per_primary = 0)
        : RedisCluster(RedisClusterOptions{primaries, replicas_per_primary, {}, {}}) {}
    explicit RedisCluster(const RedisClusterOptions& options);
    /// "redis-cluster://[:password@]127.0.0.1:P1,127.0.0.1:P2,..." (the primaries only).
    std::string url() const;
    /// Every node, primaries first, replicas after.
    int size() const { return static_cast<int>(ports_.size()); }
    unsigned short port(int node) const { return ports_[static_cast<size_t>(node)]; }
    std::string command(int node, const std::vector<std::string>& argv) const {
        return redis_command(port(node), password_, argv);
    }
    long long integer(int node, const std::vector<std::string>& argv) const { return std::stoll(command(node, argv)); }
    /// The node (index) that owns `slot`, as the first live node's CLUSTER NODES says.
    int owner_of(int slot) const;
    /// The owner (node index) of every slot, -1 where none, from one CLUSTER NODES.
    std::vector<int> owners() const;
    /// The node (index) replicating `primary`, as `primary`'s CLUSTER NODES says; -1 when none.
    int replica_of(int primary) const;
    /// True when `node` says ROLE master.
    bool is_primary(int node) const;
    /// SIGKILL one node; later calls that pick "a live node" skip it.
    void kill(int node);
    /// Moving a slot from one node to another, in the steps an operator (or redis-cli --cluster
    /// reshard) takes: IMPORTING/MIGRATING, MIGRATE every key, then SETSLOT NODE everywhere.
    void begin_migration(int slot, int from, int to) const;
    void migrate_keys(int slot, int from, int to) const;
    void finish_migration(int slot, int to) const;

private:
    std::string node_id(int node) const;
    int index_of_port(unsigned short port) const;
    int first_live() const;
    int primaries_ = 0;
    std::string password_;
    std::vector<unsigned short> ports_;
    std::vector<Child> nodes_;
    std::vector<bool> killed_;
};

/// The ratelimitd binary with a config file written from `config_text`.
///
/// Unless the test sets one (config key, flag or variable), the server gets a store deadline of
/// 2 s instead of the default 50 ms: one slow Redis call on a loaded, sanitized build would
/// otherwise be a degraded answer and put an exact count off by one. Tests about deadlines set
/// their own.
///
/// When it dies with the object, it is stopped as an operator stops it (SIGTERM) and must exit
/// 0 with no sanitizer report in its log; otherwise the running test fails (stop()).
class Ratelimitd {
public:
    /// Starts `ratelimitd --config <tmp> --listen 127.0.0.1:0 [--redis url] extra...` and waits
    /// for its "listening on" line. `redis_url` empty: the embedded store.
    Ratelimitd(const std::string& config_text, const std::string& redis_url,
               const std::vector<std::string>& extra_args = {},
               const std::vector<std::string>& extra_env = {});
    ~Ratelimitd();
    Ratelimitd(Ratelimitd&&) = default;
    Ratelimitd& operator=(Ratelimitd&&) = delete;
    /// SIGTERM, then waits for the exit: a failure of the running test when it does not exit 0
    /// within 15 s, or when its log holds an AddressSanitizer, LeakSanitizer or UBSan report.
    /// A process that has already exited is only checked for reports. Idempotent.
    void stop();
    unsigned short port() const { return port_; }
    const std::string& config_path() const { return config_path_; }
    Child& process() { return child_; }
    /// Rewrites the config file (for SIGHUP reload tests).
    void write_config(const std::string& text) const;

private:
    std::string config_path_;
    unsigned short port_ = 0;
    Child child_;
    bool stopped_ = false;
};

/// A unique scratch directory under /tmp for this test process.
std::string scratch_dir();

}  // namespace ratelimitd::test
