#include "support/event_schema.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace ratelimitd::test {

std::string schema_failures(const std::vector<ReceivedRequest>& received) {
    char path[] = "/tmp/ratelimitd-events-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) return "no temporary file";
    close(fd);
    {
        std::ofstream out(path);
        for (const auto& r : received) out << r.body << '\n';
    }
    const std::string source = RATELIMITD_SOURCE_DIR;
    const std::string command = "python3 " + source + "/tests/support/validate_events.py " + source +
                                "/docs/schema/usage-event.schema.json " + path + " 2>&1";
    std::string said;
    FILE* p = popen(command.c_str(), "r");
    if (p == nullptr) return "python3 did not start";
    std::array<char, 512> chunk{};
    while (fgets(chunk.data(), static_cast<int>(chunk.size()), p) != nullptr) said += chunk.data();
    const int status = pclose(p);
    unlink(path);
    if (status != 0 && said.empty()) said = "the validator failed (status " + std::to_string(status) + ")";
    return status == 0 ? std::string() : said;
}

}  // namespace ratelimitd::test
