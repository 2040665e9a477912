// Process settings: command line > RATELIMITD_* environment > config file > defaults.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/policy.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace ratelimitd::app {

enum class Command { serve, check_config, version, help };

/// The command line as given, before precedence is applied.
struct CommandLine {
    Command command = Command::serve;
    std::string file;                           ///< --config or --check-config FILE
    std::map<std::string, std::string> flags;   ///< "listen" -> "127.0.0.1:0", ...
};

/// Parses `--flag value` and `--flag=value`. Unknown flags and missing values fail with a
/// message naming the flag. Never throws.
result<CommandLine> parse_command_line(int argc, const char* const* argv);

struct Settings {
    std::string config_path;
    std::string listen_host = "127.0.0.1";
    unsigned short listen_port = 8080;
    std::optional<std::string> redis_url;       ///< none anywhere: the embedded store
    int threads = 1;
    std::string log_level = "info";
    std::string log_format = "text";
    std::chrono::milliseconds store_timeout{50};
    std::optional<std::string> admin_token;     ///< RATELIMITD_ADMIN_TOKEN or admin_token
    std::optional<std::string> hash_secret;     ///< RATELIMITD_HASH_SECRET (wins over hash_secret)
    std::string access_log = "off";             ///< off|denied|all
    double access_log_sample = 1.0;
    bool denial_cache = true;                   ///< --denial-cache on|off (Redis store only)
    bool coalescing = true;                     ///< --coalescing on|off (Redis store only)
    bool watch_config = true;                   ///< --watch-config on|off: reload when the file changes
    std::size_t max_connections = 10'000;       ///< open at once; beyond it: 503 and close
    std::size_t max_requests_per_connection = 10'000;  ///< the last one's answer closes
    std::chrono::milliseconds request_timeout{10'000};  ///< to read a whole request
    std::size_t memory_max_keys = 1'000'000;    ///< embedded store; 0: no cap
    std::string redis_tls_ca;                   ///< rediss://: CA bundle; empty: the system's
    std::string redis_tls_cert;                 ///< rediss://: client certificate file
    std::string redis_tls_key;                  ///< rediss://: its private key file
    std::string redis_tls_server_name;          ///< rediss://: empty: the URL's host
    bool redis_tls_insecure_skip_verify = false;
};

/// Looks up an environment variable; nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;

/// Applies precedence flag > environment (RATELIMITD_LISTEN, RATELIMITD_REDIS_URL or
/// RATELIMITD_REDIS, RATELIMITD_THREADS, RATELIMITD_LOG_LEVEL, RATELIMITD_LOG_FORMAT,
/// RATELIMITD_STORE_TIMEOUT, RATELIMITD_ACCESS_LOG, RATELIMITD_MAX_CONNECTIONS,
/// RATELIMITD_MAX_REQUESTS_PER_CONNECTION, RATELIMITD_REQUEST_TIMEOUT,
/// RATELIMITD_MEMORY_MAX_KEYS, RATELIMITD_DENIAL_CACHE, RATELIMITD_COALESCING,
/// RATELIMITD_WATCH_CONFIG, RATELIMITD_REDIS_TLS_{CA,CERT,KEY,SERVER_NAME,INSECURE_SKIP_VERIFY};
/// RATELIMITD_ADMIN_TOKEN and RATELIMITD_HASH_SECRET have no
/// flag, so they stay out of `ps`) > config file > default, and validates each value; a bad
/// value fails with a message naming the setting. The config path comes from --config or
/// RATELIMITD_CONFIG. Never throws.
result<Settings> resolve_settings(const CommandLine& cl, const policy::FileSettings& file,
                                  const EnvLookup& env);

/// The config path alone (--config, else RATELIMITD_CONFIG), needed before the file is read.
std::optional<std::string> config_path(const CommandLine& cl, const EnvLookup& env);

/// Splits "HOST:PORT" or "[V6]:PORT". Fails naming the flag. Never throws.
result<std::pair<std::string, unsigned short>> parse_listen(std::string_view text);

/// The --help text.
const char* usage();

}  // namespace ratelimitd::app
