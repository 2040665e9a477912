// A sentinel process for integration tests.
#include "support/sentinel.hpp"
#include "support/wait.hpp"

#include <hiredis/hiredis.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace ratelimitd::test {

namespace {

void flatten(const redisReply* r, std::string& out) {
    auto word = [&out](const std::string& w) {
        if (!out.empty()) out += ' ';
        out += w;
    };
    switch (r->type) {
        case REDIS_REPLY_ARRAY:
            for (size_t i = 0; i < r->elements; ++i) flatten(r->element[i], out);
            break;
        case REDIS_REPLY_INTEGER: word(std::to_string(r->integer)); break;
        case REDIS_REPLY_NIL: word("(nil)"); break;
        case REDIS_REPLY_ERROR: word("(error) " + std::string(r->str, r->len)); break;
        default: word(std::string(r->str, r->len)); break;
    }
}

}  // namespace

std::string redis_command(unsigned short port, const std::vector<std::string>& argv) {
    timeval tv{1, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (c == nullptr || c->err) {
        if (c) redisFree(c);
        return "(error) cannot connect";
    }
    redisSetTimeout(c, tv);
    std::vector<const char*> args;
    std::vector<size_t> lens;
    for (const auto& a : argv) {
        args.push_back(a.data());
        lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(args.size()), args.data(), lens.data()));
    std::string out;
    if (r == nullptr) out = "(error) no reply";
    else flatten(r, out);
    if (r) freeReplyObject(r);
    redisFree(c);
    return out;
}

RedisSentinel::RedisSentinel(std::string name, unsigned short master_port)
    : name_(std::move(name)), port_(free_port()) {
    static std::atomic<int> n{0};
    const std::string base = scratch_dir() + "/sentinel-" + std::to_string(port_) + "-" + std::to_string(n++);
    const std::string conf = base + ".conf";
    std::ofstream(conf) << "port " << port_ << "\n"
                        << "bind 127.0.0.1\n"
                        << "dir " << scratch_dir() << "\n"
                        << "sentinel monitor " << name_ << " 127.0.0.1 " << master_port << " 1\n"
                        << "sentinel down-after-milliseconds " << name_ << " 1000\n"
                        << "sentinel failover-timeout " << name_ << " 3000\n";
    child_ = Child({"redis-server", conf, "--sentinel"}, base + ".log");
    const auto until = std::chrono::steady_clock::now() + process_start_bound;
    while (std::chrono::steady_clock::now() < until) {
        if (can_connect(port_) && command({"PING"}) == "PONG") return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw std::runtime_error("redis sentinel did not start on port " + std::to_string(port_) + ": " + child_.log());
}

std::string RedisSentinel::url() const {
    return "redis-sentinel://127.0.0.1:" + std::to_string(port_) + "/" + name_;
}

std::string RedisSentinel::command(const std::vector<std::string>& argv) const { return redis_command(port_, argv); }

std::string RedisSentinel::master_address() const {
    const std::string r = command({"SENTINEL", "get-master-addr-by-name", name_});
    const auto space = r.find(' ');
    if (r.rfind("(", 0) == 0 || space == std::string::npos) return {};
    return r.substr(0, space) + ":" + r.substr(space + 1);
}

}  // namespace ratelimitd::test
