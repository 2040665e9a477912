// A Redis Cluster for a test: its nodes started, joined by redis-cli --cluster create, and read
// (slot owners, replicas) or moved (kill, slot migration) as an operator would.
#include "support/redis_cluster.hpp"

#include "support/ports.hpp"
#include "support/scratch_dir.hpp"
#include "support/wait.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ratelimitd::test {

RedisCluster::RedisCluster(const RedisClusterOptions& options)
    : primaries_(options.primaries), password_(options.password) {
    static std::atomic<int> n{0};
    const std::string dir = scratch_dir() + "/cluster-" + std::to_string(n++);
    if (::mkdir(dir.c_str(), 0755) != 0) throw std::runtime_error("cannot make " + dir);
    start_nodes(options, dir);
    create(options, dir);
    // redis-cli makes the first `primaries` nodes the primaries.
    for (int i = 0; i < primaries_; ++i) {
        if (!is_primary(i)) throw std::runtime_error("node " + std::to_string(i) + " is not a primary");
    }
    const auto until = std::chrono::steady_clock::now() + process_start_bound;
    while (!settled(options)) {
        if (std::chrono::steady_clock::now() > until) throw std::runtime_error("the cluster did not become ok");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

std::vector<std::string> RedisCluster::node_argv(const RedisClusterOptions& options, const std::string& dir,
                                                 unsigned short port, unsigned short bus) const {
    const std::string p = std::to_string(port);
    // No diskless-sync delay (5 s by default): replicas sync at once.
    std::vector<std::string> argv{"redis-server", "--port", p, "--cluster-port", std::to_string(bus),
                                  "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                                  "--cluster-config-file", dir + "/nodes-" + p + ".conf",
                                  "--save", "", "--appendonly", "no", "--dir", dir,
                                  "--repl-diskless-sync-delay", "0"};
    if (options.node_timeout.count() > 0) {
        argv.push_back("--cluster-node-timeout");
        argv.push_back(std::to_string(options.node_timeout.count()));
    }
    if (!options.require_full_coverage) {
        argv.push_back("--cluster-require-full-coverage");
        argv.push_back("no");
    }
    if (!password_.empty()) {
        argv.push_back("--requirepass");
        argv.push_back(password_);
        argv.push_back("--masterauth");
        argv.push_back(password_);
    }
    return argv;
}

void RedisCluster::start_nodes(const RedisClusterOptions& options, const std::string& dir) {
    const int total = options.primaries * (1 + options.replicas_per_primary);
    for (int i = 0; i < total; ++i) {
        const auto port = free_port();
        // An explicit bus port: port + 10000 may be taken, or past 65535.
        const auto bus = free_port();
        ports_.push_back(port);
        killed_.push_back(false);
        nodes_.emplace_back(node_argv(options, dir, port, bus), dir + "/redis-" + std::to_string(port) + ".log");
    }
    const auto until = std::chrono::steady_clock::now() + process_start_bound;
    for (int i = 0; i < total; ++i) {
        while (command(i, {"PING"}) != "PONG") {
            if (std::chrono::steady_clock::now() > until) throw std::runtime_error("cluster node did not start");
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
}

void RedisCluster::create(const RedisClusterOptions& options, const std::string& dir) const {
    std::vector<std::string> argv{"redis-cli", "--cluster", "create"};
    for (const auto port : ports_) argv.push_back("127.0.0.1:" + std::to_string(port));
    argv.insert(argv.end(), {"--cluster-replicas", std::to_string(options.replicas_per_primary), "--cluster-yes"});
    // The password by the environment: not on a command line.
    std::vector<std::string> env;
    if (!password_.empty()) env.push_back("REDISCLI_AUTH=" + password_);
    Child cli(argv, dir + "/create.log", env);
    if (cli.wait(std::chrono::seconds(30)) != 0) throw std::runtime_error("redis-cli --cluster create failed: " + cli.log());
}

// Every node must see the cluster as ok and agree on every slot's owner (and replicas); every
// replica's link must be up.
bool RedisCluster::settled(const RedisClusterOptions& options) const {
    const std::string slots = command(0, {"CLUSTER", "SLOTS"});
    for (int i = 0; i < size(); ++i) {
        if (command(i, {"CLUSTER", "INFO"}).find("cluster_state:ok") == std::string::npos ||
            command(i, {"CLUSTER", "SLOTS"}).size() != slots.size()) {
            return false;
        }
        if (i >= primaries_ &&
            command(i, {"INFO", "replication"}).find("master_link_status:up") == std::string::npos) {
            return false;
        }
    }
    if (options.replicas_per_primary > 0) {
        for (int p = 0; p < primaries_; ++p) {
            if (replica_of(p) < primaries_) return false;
        }
    }
    return true;
}

std::string RedisCluster::url() const {
    std::string out = "redis-cluster://" + (password_.empty() ? std::string() : ":" + password_ + "@");
    for (int i = 0; i < primaries_; ++i) out += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(port(i));
    return out;
}

std::string RedisCluster::node_id(int node) const { return command(node, {"CLUSTER", "MYID"}); }

int RedisCluster::index_of_port(unsigned short port) const {
    for (int n = 0; n < size(); ++n) {
        if (ports_[static_cast<size_t>(n)] == port) return n;
    }
    return -1;
}

int RedisCluster::first_live() const {
    for (int n = 0; n < size(); ++n) {
        if (!killed_[static_cast<size_t>(n)]) return n;
    }
    throw std::runtime_error("every cluster node was killed");
}

namespace {

/// CLUSTER NODES lines split into words: id addr flags master ping pong epoch link slot...
std::vector<std::vector<std::string>> cluster_nodes(const std::string& text) {
    std::vector<std::vector<std::string>> out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::vector<std::string> w;
        for (std::string t; words >> t;) w.push_back(t);
        if (w.size() >= 8) out.push_back(std::move(w));
    }
    return out;
}

unsigned short port_of(const std::string& addr) {  // "127.0.0.1:7000@17000"
    const auto colon = addr.rfind(':', addr.find('@'));
    return static_cast<unsigned short>(std::stoi(addr.substr(colon + 1)));
}

}  // namespace

std::vector<int> RedisCluster::owners() const {
    std::vector<int> out(16384, -1);
    for (const auto& w : cluster_nodes(command(first_live(), {"CLUSTER", "NODES"}))) {
        if (w[2].find("master") == std::string::npos) continue;
        const int node = index_of_port(port_of(w[1]));
        for (size_t i = 8; i < w.size(); ++i) {
            if (w[i].front() == '[') continue;  // a slot being migrated or imported
            const auto dash = w[i].find('-');
            const int first = std::stoi(w[i].substr(0, dash));
            const int last = dash == std::string::npos ? first : std::stoi(w[i].substr(dash + 1));
            for (int s = first; s <= last; ++s) out[static_cast<size_t>(s)] = node;
        }
    }
    return out;
}

int RedisCluster::owner_of(int slot) const {
    const int owner = owners()[static_cast<size_t>(slot)];
    if (owner < 0) throw std::runtime_error("no owner for slot " + std::to_string(slot));
    return owner;
}

int RedisCluster::replica_of(int primary) const {
    const std::string id = node_id(primary);
    for (const auto& w : cluster_nodes(command(primary, {"CLUSTER", "NODES"}))) {
        if (w[2].find("slave") != std::string::npos && w[3] == id) return index_of_port(port_of(w[1]));
    }
    return -1;
}

bool RedisCluster::is_primary(int node) const { return command(node, {"ROLE"}).rfind("master", 0) == 0; }

void RedisCluster::kill(int node) {
    killed_[static_cast<size_t>(node)] = true;
    nodes_[static_cast<size_t>(node)].signal(SIGKILL);
    nodes_[static_cast<size_t>(node)].wait(std::chrono::seconds(5));
}

void RedisCluster::begin_migration(int slot, int from, int to) const {
    const std::string s = std::to_string(slot);
    command(to, {"CLUSTER", "SETSLOT", s, "IMPORTING", node_id(from)});
    command(from, {"CLUSTER", "SETSLOT", s, "MIGRATING", node_id(to)});
}

void RedisCluster::migrate_keys(int slot, int from, int to) const {
    while (true) {
        std::istringstream in(command(from, {"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), "100"}));
        std::vector<std::string> argv{"MIGRATE", "127.0.0.1", std::to_string(port(to)), "", "0", "5000"};
        if (!password_.empty()) argv.insert(argv.end(), {"AUTH", password_});
        argv.push_back("KEYS");
        bool any = false;
        for (std::string k; in >> k;) {
            argv.push_back(k);
            any = true;
        }
        if (!any) return;
        const std::string r = command(from, argv);
        if (r != "OK") throw std::runtime_error("MIGRATE failed: " + r);
    }
}

void RedisCluster::finish_migration(int slot, int to) const {
    const std::string s = std::to_string(slot);
    const std::string id = node_id(to);
    // The target first, then the others (the order redis-cli --cluster reshard uses).
    command(to, {"CLUSTER", "SETSLOT", s, "NODE", id});
    for (int n = 0; n < size(); ++n) {
        if (n != to) command(n, {"CLUSTER", "SETSLOT", s, "NODE", id});
    }
}

}  // namespace ratelimitd::test
