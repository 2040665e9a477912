// A private redis-server on a free loopback port, and redis_command: one command, its reply as text.
#include "support/redis_server.hpp"

#include "support/ports.hpp"
#include "support/scratch_dir.hpp"
#include "support/wait.hpp"

#include <hiredis/hiredis.h>

#include <signal.h>

#include <atomic>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ratelimitd::test {

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

}  // namespace ratelimitd::test
