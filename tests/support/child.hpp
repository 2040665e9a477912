// A child process of a test (a server it starts), its output captured to a log file.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <sys/types.h>

namespace ratelimitd::test {

/// A child process with its stderr (and stdout) captured to a file; SIGKILLed when the object
/// dies while it still runs.
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

}  // namespace ratelimitd::test
