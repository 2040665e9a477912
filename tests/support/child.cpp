// A child process of a test: fork and exec with its output in a log file, signals, waits.
#include "support/child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ratelimitd::test {

namespace {

std::string read_log_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

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

std::string Child::log() const { return read_log_file(log_path_); }

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

}  // namespace ratelimitd::test
