#include "support/run_command.hpp"

#include <array>
#include <cstdio>
#include <sys/wait.h>

namespace ratelimitd::test {

CommandResult run_command(const std::string& command) {
    CommandResult r;
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    if (p == nullptr) return r;
    std::array<char, 512> chunk{};
    while (fgets(chunk.data(), static_cast<int>(chunk.size()), p) != nullptr) r.output += chunk.data();
    const int raw = pclose(p);
    r.status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return r;
}

std::string shell_quote(const std::string& text) {
    std::string quoted = "'";
    for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

}  // namespace ratelimitd::test
