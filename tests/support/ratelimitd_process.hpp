// The ratelimitd binary under test, started with a config file and stopped as an operator stops it.
#pragma once

#include "support/child.hpp"

#include <string>
#include <vector>

namespace ratelimitd::test {

/// The ratelimitd binary with a config file written from `config_text`.
///
/// Unless the test sets one (config key, flag or variable), the server gets a store deadline of
/// 2 s instead of the default 50 ms: one slow Redis call on a loaded, sanitized build would
/// otherwise be a degraded answer and put an exact count off by one. Tests about deadlines set
/// their own.
///
/// When it dies with the object, it is stopped as an operator stops it (SIGTERM) and must exit
/// 0 with no sanitizer report in its log; otherwise the running test fails (stop()).
class Ratelimitd {
public:
    /// Starts `ratelimitd --config <tmp> --listen 127.0.0.1:0 [--redis url] extra...` and waits
    /// for its "listening on" line. `redis_url` empty: the embedded store.
    Ratelimitd(const std::string& config_text, const std::string& redis_url,
               const std::vector<std::string>& extra_args = {},
               const std::vector<std::string>& extra_env = {});
    ~Ratelimitd();
    Ratelimitd(Ratelimitd&&) = default;
    Ratelimitd& operator=(Ratelimitd&&) = delete;
    /// SIGTERM, then waits for the exit: a failure of the running test when it does not exit 0
    /// within 15 s, or when its log holds an AddressSanitizer, LeakSanitizer or UBSan report.
    /// A process that has already exited is only checked for reports. Idempotent.
    void stop();
    unsigned short port() const { return port_; }
    const std::string& config_path() const { return config_path_; }
    Child& process() { return child_; }
    /// Rewrites the config file (for SIGHUP reload tests).
    void write_config(const std::string& text) const;

private:
    std::string config_path_;
    unsigned short port_ = 0;
    Child child_;
    bool stopped_ = false;
};

}  // namespace ratelimitd::test
