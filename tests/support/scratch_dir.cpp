// The scratch directory of a test process, made on first use and removed at exit.
#include "support/scratch_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

namespace ratelimitd::test {

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

}  // namespace ratelimitd::test
