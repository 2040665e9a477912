// Child processes for integration tests: redis-server and ratelimitd on free loopback ports.
#include "support/processes.hpp"

#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
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

std::string scratch_dir() {
    static const std::string dir = [] {
        char tmpl[] = "/tmp/ratelimitd-test-XXXXXX";
        const char* d = ::mkdtemp(tmpl);
        if (d == nullptr) throw std::runtime_error("mkdtemp failed");
        return std::string(d);
    }();
    return dir;
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

unsigned short free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

Child::Child(const std::vector<std::string>& argv, const std::string& log_path,
             const std::vector<std::string>& extra_env)
    : log_path_(log_path) {
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
        int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::close(fd);
        for (const auto& kv : extra_env) ::putenv(const_cast<char*>(kv.c_str()));
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        std::perror("execvp");
        ::_exit(127);
    }
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
        std::istringstream lines(log());
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
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
        if (can_connect(port_) && command({"PING"}) == "PONG") return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw std::runtime_error("redis-server did not start on port " + std::to_string(port_) + ": " + child_.log());
}

std::string RedisServer::command(const std::vector<std::string>& argv) const {
    timeval tv{2, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
    if (c == nullptr || c->err) {
        if (c) redisFree(c);
        return "(error) cannot connect";
    }
    if (!password_.empty()) {
        auto* auth = static_cast<redisReply*>(redisCommand(c, "AUTH %b", password_.data(), password_.size()));
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
    if (r == nullptr) {
        out = "(error) no reply";
    } else if (r->type == REDIS_REPLY_INTEGER) {
        out = std::to_string(r->integer);
    } else if (r->type == REDIS_REPLY_NIL) {
        out = "(nil)";
    } else if (r->type == REDIS_REPLY_ARRAY) {
        for (size_t i = 0; i < r->elements; ++i) {
            if (i) out += ' ';
            out.append(r->element[i]->str ? std::string(r->element[i]->str, r->element[i]->len)
                                          : std::to_string(r->element[i]->integer));
        }
    } else if (r->type == REDIS_REPLY_ERROR) {
        out = "(error) " + std::string(r->str, r->len);
    } else {
        out.assign(r->str, r->len);
    }
    if (r) freeReplyObject(r);
    redisFree(c);
    return out;
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
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    child_ = Child(argv, scratch_dir() + "/ratelimitd-" + std::to_string(id) + ".log", extra_env);
    const std::string line = child_.wait_for_log("listening on ", std::chrono::seconds(15));
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
