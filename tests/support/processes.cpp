// Child processes for integration tests: redis-server and ratelimitd on free loopback ports.
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ratelimitd::test {

namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

namespace {

// The scratch directory, removed when the test process exits; RATELIMITD_KEEP_SCRATCH=1 keeps
// it (the servers' logs) for a look after a failure.
struct ScratchDir {
    std::string path;
    ScratchDir() {
        char tmpl[] = "/tmp/ratelimitd-test-XXXXXX";
        const char* d = ::mkdtemp(tmpl);
        if (d == nullptr) throw std::runtime_error("mkdtemp failed");
        path = d;
    }
    ~ScratchDir() {
        const char* keep = std::getenv("RATELIMITD_KEEP_SCRATCH");
        if (keep != nullptr && std::string(keep) == "1") return;
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

}  // namespace

std::string scratch_dir() {
    static const ScratchDir dir;
    return dir.path;
}

bool can_connect(unsigned short port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

namespace {

bool bindable(unsigned short port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const int on = 1;  // as redis-server and nginx bind: a port in TIME_WAIT is free to them
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

}  // namespace

// A port picked by bind(0) and released can be taken again before the server binds it: by the
// next bind(0) (another pick of this or another test process) or as the local port of any
// outgoing connection. So ports come from below the kernel's ephemeral range (32768-60999 by
// default), which neither draws from, and each pick is reserved for the life of this process
// by a lock file, so that concurrent test processes never pick the same one.
unsigned short free_port() {
    constexpr int first = 20000;
    constexpr int count = 12000;  // 20000..31999
    static std::mutex mu;
    static int next = static_cast<int>((static_cast<unsigned>(::getpid()) * 2654435761u) % count);
    std::lock_guard lock(mu);
    const std::string locks = "/tmp/ratelimitd-test-ports";
    ::mkdir(locks.c_str(), 0777);
    for (int tries = 0; tries < count; ++tries) {
        const auto port = static_cast<unsigned short>(first + next);
        next = (next + 1) % count;
        const std::string path = locks + "/" + std::to_string(port);
        const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) continue;
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // another live test process holds it
            ::close(fd);
            continue;
        }
        if (!bindable(port)) {
            ::close(fd);
            continue;
        }
        return port;  // fd stays open: the reservation lasts as long as this process
    }
    throw std::runtime_error("no free loopback port in 20000..31999");
}

Child::Child(const std::vector<std::string>& argv, const std::string& log_path,
             const std::vector<std::string>& extra_env)
    : log_path_(log_path) {
    const pid_t parent = ::getpid();
    // Emptied here, before the fork: once the constructor returns, the log holds this process's
    // lines only, so a restart on the same path cannot have a wait find the previous one's.
    const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) throw std::runtime_error("cannot open " + log_path);
    pid_ = ::fork();
    if (pid_ < 0) {
        ::close(log_fd);
        throw std::runtime_error("fork failed");
    }
    if (pid_ == 0) {
        // A test killed by ctest's timeout takes its servers with it, rather than leaving them
        // running (and holding ports and CPU) for the rest of the run.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);
        ::dup2(log_fd, 1);  // dup2 clears O_CLOEXEC on 1 and 2
        ::dup2(log_fd, 2);
        for (const auto& kv : extra_env) ::putenv(const_cast<char*>(kv.c_str()));
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        std::perror("execvp");
        ::_exit(127);
    }
    ::close(log_fd);
}

Child::~Child() {
    if (pid_ > 0 && running()) {
        signal(SIGKILL);
        wait(std::chrono::seconds(5));
    }
}

Child::Child(Child&& other) noexcept : pid_(other.pid_), log_path_(std::move(other.log_path_)) {
    other.pid_ = -1;
}

Child& Child::operator=(Child&& other) noexcept {
    if (this != &other) {
        if (pid_ > 0 && running()) {
            signal(SIGKILL);
            wait(std::chrono::seconds(5));
        }
        pid_ = other.pid_;
        log_path_ = std::move(other.log_path_);
        other.pid_ = -1;
    }
    return *this;
}

bool Child::running() {
    if (pid_ <= 0) return false;
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
        pid_ = -1;
        return false;
    }
    return true;
}

void Child::signal(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
}

int Child::wait(std::chrono::milliseconds timeout) {
    if (pid_ <= 0) return -1;
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
        int status = 0;
        const pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            pid_ = -1;
            if (WIFEXITED(status)) return WEXITSTATUS(status);
            if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
            return -1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1;
}

std::string Child::log() const { return read_file(log_path_); }

std::string Child::wait_for_log(const std::string& text, std::chrono::milliseconds timeout) const {
    const auto until = std::chrono::steady_clock::now() + timeout;
    do {
        // Whole lines only: the last one may be half written, and a caller parsing the line it
        // gets (an audit entry's JSON) must never see part of one.
        std::string so_far = log();
        so_far.resize(so_far.rfind('\n') + 1);  // npos + 1 == 0: no whole line yet
        std::istringstream lines(so_far);
        for (std::string line; std::getline(lines, line);) {
            if (line.find(text) != std::string::npos) return line;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } while (std::chrono::steady_clock::now() < until);
    return {};
}

RedisServer::RedisServer(std::string password) : port_(free_port()), password_(std::move(password)) { start(); }

RedisServer::RedisServer(std::string password, std::vector<std::string> extra_args)
    : port_(free_port()), password_(std::move(password)), extra_args_(std::move(extra_args)) {
    start();
}

void RedisServer::start() {
    static std::atomic<int> n{0};
    const std::string log = scratch_dir() + "/redis-" + std::to_string(port_) + "-" + std::to_string(n++) + ".log";
    std::vector<std::string> argv{"redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save",
                                  "",             "--appendonly", "no",       "--dir",  scratch_dir()};
    if (!password_.empty()) {
        argv.push_back("--requirepass");
        argv.push_back(password_);
    }
    argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
    child_ = Child(argv, log);
    const auto until = std::chrono::steady_clock::now() + process_start_bound;
    while (std::chrono::steady_clock::now() < until) {
        if (can_connect(port_) && command({"PING"}) == "PONG") return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw std::runtime_error("redis-server did not start on port " + std::to_string(port_) + ": " + child_.log());
}

std::string redis_command(unsigned short port, const std::string& password, const std::vector<std::string>& argv) {
    timeval tv{2, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (c == nullptr || c->err) {
        if (c) redisFree(c);
        return "(error) cannot connect";
    }
    if (!password.empty()) {
        auto* auth = static_cast<redisReply*>(redisCommand(c, "AUTH %b", password.data(), password.size()));
        if (auth) freeReplyObject(auth);
    }
    std::vector<const char*> args;
    std::vector<size_t> lens;
    for (const auto& a : argv) {
        args.push_back(a.data());
        lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(args.size()), args.data(), lens.data()));
    std::string out;
    bool first = true;
    // Nested arrays (CLUSTER SLOTS) are flattened depth-first.
    std::function<void(const redisReply*)> flatten = [&](const redisReply* e) {
        if (e->type == REDIS_REPLY_ARRAY) {
            for (size_t i = 0; i < e->elements; ++i) flatten(e->element[i]);
            return;
        }
        if (!first) out += ' ';
        first = false;
        out.append(e->str ? std::string(e->str, e->len) : std::to_string(e->integer));
    };
    if (r == nullptr) {
        out = "(error) no reply";
    } else if (r->type == REDIS_REPLY_INTEGER) {
        out = std::to_string(r->integer);
    } else if (r->type == REDIS_REPLY_NIL) {
        out = "(nil)";
    } else if (r->type == REDIS_REPLY_ARRAY) {
        flatten(r);
    } else if (r->type == REDIS_REPLY_ERROR) {
        out = "(error) " + std::string(r->str, r->len);
    } else {
        out.assign(r->str, r->len);
    }
    if (r) freeReplyObject(r);
    redisFree(c);
    return out;
}

std::string RedisServer::command(const std::vector<std::string>& argv) const {
    return redis_command(port_, password_, argv);
}

long long RedisServer::integer(const std::vector<std::string>& argv) const {
    return std::stoll(command(argv));
}

std::vector<std::string> RedisServer::keys() const {
    std::vector<std::string> out;
    std::istringstream ss(command({"KEYS", "*"}));
    for (std::string k; ss >> k;) out.push_back(k);
    return out;
}

void RedisServer::kill_hard() {
    child_.signal(SIGKILL);
    child_.wait(std::chrono::seconds(5));
}

void RedisServer::restart() {
    kill_hard();
    start();
}

void RedisServer::pause() { child_.signal(SIGSTOP); }
void RedisServer::resume() { child_.signal(SIGCONT); }

RedisCluster::RedisCluster(const RedisClusterOptions& options)
    : primaries_(options.primaries), password_(options.password) {
    static std::atomic<int> n{0};
    const std::string dir = scratch_dir() + "/cluster-" + std::to_string(n++);
    if (::mkdir(dir.c_str(), 0755) != 0) throw std::runtime_error("cannot make " + dir);
    const int total = options.primaries * (1 + options.replicas_per_primary);
    std::vector<std::string> create{"redis-cli", "--cluster", "create"};
    for (int i = 0; i < total; ++i) {
        const auto port = free_port();
        // An explicit bus port: port + 10000 may be taken, or past 65535.
        const auto bus = free_port();
        const std::string p = std::to_string(port);
        ports_.push_back(port);
        killed_.push_back(false);
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
        nodes_.emplace_back(argv, dir + "/redis-" + p + ".log");
        create.push_back("127.0.0.1:" + p);
    }
    auto until = std::chrono::steady_clock::now() + process_start_bound;
    for (int i = 0; i < total; ++i) {
        while (command(i, {"PING"}) != "PONG") {
            if (std::chrono::steady_clock::now() > until) throw std::runtime_error("cluster node did not start");
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    create.insert(create.end(),
                  {"--cluster-replicas", std::to_string(options.replicas_per_primary), "--cluster-yes"});
    // The password by the environment: not on a command line.
    std::vector<std::string> env;
    if (!password_.empty()) env.push_back("REDISCLI_AUTH=" + password_);
    Child cli(create, dir + "/create.log", env);
    if (cli.wait(std::chrono::seconds(30)) != 0) throw std::runtime_error("redis-cli --cluster create failed: " + cli.log());
    // redis-cli makes the first `primaries` nodes the primaries.
    for (int i = 0; i < primaries_; ++i) {
        if (!is_primary(i)) throw std::runtime_error("node " + std::to_string(i) + " is not a primary");
    }
    // Every node must see the cluster as ok and agree on every slot's owner (and replicas); every
    // replica's link must be up.
    until = std::chrono::steady_clock::now() + process_start_bound;
    while (true) {
        bool ok = true;
        const std::string slots = command(0, {"CLUSTER", "SLOTS"});
        for (int i = 0; i < total && ok; ++i) {
            ok = command(i, {"CLUSTER", "INFO"}).find("cluster_state:ok") != std::string::npos &&
                 command(i, {"CLUSTER", "SLOTS"}).size() == slots.size();
            if (ok && i >= primaries_) {
                ok = command(i, {"INFO", "replication"}).find("master_link_status:up") != std::string::npos;
            }
        }
        if (ok && options.replicas_per_primary > 0) {
            for (int p = 0; p < primaries_ && ok; ++p) ok = replica_of(p) >= primaries_;
        }
        if (ok) break;
        if (std::chrono::steady_clock::now() > until) throw std::runtime_error("the cluster did not become ok");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
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

namespace {

bool mentions(const std::vector<std::string>& words, std::string_view text) {
    for (const auto& w : words) {
        if (w.find(text) != std::string::npos) return true;
    }
    return false;
}

// The test's own store deadline, when it sets one anywhere.
bool sets_store_timeout(const std::string& config_text, const std::vector<std::string>& args,
                        const std::vector<std::string>& env) {
    return config_text.find("store_timeout") != std::string::npos || mentions(args, "--store-timeout") ||
           mentions(env, "RATELIMITD_STORE_TIMEOUT=");
}

// What a sanitizer prints when it finds something (ASan, LSan, UBSan).
constexpr std::string_view sanitizer_reports[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                                  "runtime error:", "UndefinedBehaviorSanitizer"};

}  // namespace

Ratelimitd::~Ratelimitd() { stop(); }

void Ratelimitd::stop() {
    if (stopped_) return;
    stopped_ = true;
    if (child_.running()) {
        child_.signal(SIGTERM);
        const int code = child_.wait(process_start_bound);
        if (code == -1) {
            child_.signal(SIGKILL);
            child_.wait(std::chrono::seconds(5));
        }
        if (code != 0) ADD_FAILURE() << "ratelimitd on port " << port_ << " exited with " << code
                                     << " after SIGTERM (-1: still running after " << process_start_bound.count()
                                     << " s); its log:\n" << child_.log();
    }
    const std::string log = child_.log();
    for (const auto report : sanitizer_reports) {
        if (log.find(report) != std::string::npos) {
            ADD_FAILURE() << "ratelimitd on port " << port_ << " logged a sanitizer report (" << report << "):\n" << log;
            break;
        }
    }
}

Ratelimitd::Ratelimitd(const std::string& config_text, const std::string& redis_url,
                       const std::vector<std::string>& extra_args, const std::vector<std::string>& extra_env) {
    static std::atomic<int> n{0};
    const int id = n++;
    config_path_ = scratch_dir() + "/config-" + std::to_string(::getpid()) + "-" + std::to_string(id) + ".yaml";
    write_config(config_text);
    std::vector<std::string> argv{RATELIMITD_BINARY, "--config", config_path_, "--listen", "127.0.0.1:0",
                                  "--threads", "2"};
    if (!redis_url.empty()) {
        argv.push_back("--redis");
        argv.push_back(redis_url);
    }
    if (!sets_store_timeout(config_text, extra_args, extra_env)) argv.insert(argv.end(), {"--store-timeout", "2s"});
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    child_ = Child(argv, scratch_dir() + "/ratelimitd-" + std::to_string(id) + ".log", extra_env);
    const std::string line = child_.wait_for_log("listening on ", process_start_bound);
    if (line.empty()) throw std::runtime_error("ratelimitd did not start: " + child_.log());
    const auto colon = line.find(':', line.find("listening on "));
    port_ = static_cast<unsigned short>(std::stoi(line.substr(colon + 1)));
}

void Ratelimitd::write_config(const std::string& text) const {
    const std::string tmp = config_path_ + ".tmp";
    std::ofstream(tmp) << text;
    std::rename(tmp.c_str(), config_path_.c_str());
}

}  // namespace ratelimitd::test
