// Settings: command line parsing and the flag > environment > file > default precedence.
#include "ratelimitd/app/settings.hpp"

#include "ratelimitd/app/cpu_count.hpp"
#include "ratelimitd/core/duration.hpp"

#include <charconv>
#include <set>
#include <thread>
#include <tuple>

namespace ratelimitd::app {

namespace {

const std::set<std::string, std::less<>> value_flags = {
    "config", "listen", "redis", "threads", "log-level", "log-format", "store-timeout", "access-log", "denial-cache", "coalescing",
    "max-connections", "max-requests-per-connection", "request-timeout", "memory-max-keys", "check-config",
    "watch-config", "redis-tls-ca", "redis-tls-cert", "redis-tls-key", "redis-tls-server-name",
    "redis-tls-insecure-skip-verify"};

Problem bad(std::string what) { return Problem{errc::invalid_request, std::move(what)}; }

// RATELIMITD_<FLAG> with '-' as '_', upper-case.
std::string env_name(std::string_view flag) {
    std::string name = "RATELIMITD_";
    for (char c : flag) name.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(c)));
    return name;
}

std::optional<std::string> pick(const CommandLine& cl, const EnvLookup& env, std::string_view flag,
                                const std::optional<std::string>& from_file) {
    if (auto it = cl.flags.find(std::string(flag)); it != cl.flags.end()) return it->second;
    if (const char* v = env(env_name(flag).c_str()); v != nullptr && *v != '\0') return std::string(v);
    return from_file;
}

// A whole number lo..hi from a flag or the environment; the message names the setting.
result<std::int64_t> parse_count(const std::string& text, std::string_view flag, std::int64_t lo,
                                 std::int64_t hi) {
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size() || n < lo || n > hi) {
        return bad(std::string(flag) + ": expected a whole number " + std::to_string(lo) + ".." +
                   std::to_string(hi) + ", got \"" + text + "\"");
    }
    return n;
}

}  // namespace

const char* usage() {
    return "usage: ratelimitd --config FILE [--listen HOST:PORT] [--redis URL] [--threads N]\n"
           "                  [--log-level trace|debug|info|warn|error] [--log-format text|json]\n"
           "                  [--store-timeout DURATION] [--access-log off|denied|all]\n"
           "                  [--denial-cache on|off] [--coalescing on|off] [--max-connections N]\n"
           "                  [--max-requests-per-connection N] [--request-timeout DURATION]\n"
           "                  [--memory-max-keys N] [--watch-config on|off]\n"
           "                  [--redis-tls-ca FILE] [--redis-tls-cert FILE --redis-tls-key FILE]\n"
           "                  [--redis-tls-server-name NAME] [--redis-tls-insecure-skip-verify on|off]\n"
           "       ratelimitd --check-config FILE   validate FILE, print what is wrong, exit 0 or 1\n"
           "       ratelimitd --version | --help\n"
           "\n"
           "--redis takes one of:\n"
           "  redis://[[user]:password@]host[:port][/db]                      one Redis\n"
           "  redis-sentinel://[[user]:password@]host[:port][,...]/master[/db]  the primary Sentinel names\n"
           "  redis-cluster://[[user]:password@]host:port[,host:port...]      a Redis Cluster\n"
           "  rediss://, rediss-sentinel://, rediss-cluster://                the same over TLS\n"
           "\n"
           "Every flag can also be set as RATELIMITD_<FLAG> (RATELIMITD_LISTEN, RATELIMITD_REDIS_URL,\n"
           "...); flags win over the environment, the environment over the config file.\n"
           "Without a Redis URL anywhere, the embedded store keeps limits per instance.\n";
}

result<CommandLine> parse_command_line(int argc, const char* const* argv) {
    CommandLine cl;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            cl.command = Command::help;
            continue;
        }
        if (arg == "--version") {
            cl.command = Command::version;
            continue;
        }
        if (arg.substr(0, 2) != "--") return bad("unexpected argument \"" + std::string(arg) + "\" (see --help)");
        std::string name(arg.substr(2));
        std::optional<std::string> value;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name.resize(eq);
        }
        if (!value_flags.contains(name)) return bad("unknown flag --" + name + " (see --help)");
        if (!value) {
            if (i + 1 >= argc) return bad("--" + name + " needs a value");
            value = argv[++i];
        }
        if (name == "check-config") {
            if (cl.command != Command::help && cl.command != Command::version) cl.command = Command::check_config;
            cl.file = *value;
        } else {
            cl.flags[name] = *value;
        }
    }
    return cl;
}

result<std::pair<std::string, unsigned short>> parse_listen(std::string_view text) {
    std::string_view host, port;
    if (!text.empty() && text.front() == '[') {
        auto close = text.find(']');
        if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
            return bad("listen: expected HOST:PORT or [IPV6]:PORT, got \"" + std::string(text) + "\"");
        }
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        auto colon = text.rfind(':');
        if (colon == std::string_view::npos) {
            return bad("listen: expected HOST:PORT, got \"" + std::string(text) + "\"");
        }
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    unsigned p = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (host.empty() || ec != std::errc{} || end != port.data() + port.size() || p > 65535) {
        return bad("listen: expected HOST:PORT with a port 0..65535, got \"" + std::string(text) + "\"");
    }
    return std::pair{std::string(host), static_cast<unsigned short>(p)};
}

std::optional<std::string> config_path(const CommandLine& cl, const EnvLookup& env) {
    if (cl.command == Command::check_config) return cl.file;
    return pick(cl, env, "config", std::nullopt);
}

result<Settings> resolve_settings(const CommandLine& cl, const policy::FileSettings& file,
                                  const EnvLookup& env) {
    Settings s;
    if (auto path = config_path(cl, env)) s.config_path = *path;

    if (auto listen = pick(cl, env, "listen", file.listen)) {
        auto hp = parse_listen(*listen);
        if (!hp) return hp.error();
        s.listen_host = hp->first;
        s.listen_port = hp->second;
    }

    // RATELIMITD_REDIS_URL is the documented name; RATELIMITD_REDIS follows the flag rule.
    s.redis_url = pick(cl, env, "redis", std::nullopt);
    if (!s.redis_url) {
        if (const char* v = env("RATELIMITD_REDIS_URL"); v != nullptr && *v != '\0') s.redis_url = v;
        else s.redis_url = file.redis;
    }

    for (auto [flag, from_file, value] :
         {std::tuple{"redis-tls-ca", &file.redis_tls_ca, &s.redis_tls_ca},
          std::tuple{"redis-tls-cert", &file.redis_tls_cert, &s.redis_tls_cert},
          std::tuple{"redis-tls-key", &file.redis_tls_key, &s.redis_tls_key},
          std::tuple{"redis-tls-server-name", &file.redis_tls_server_name, &s.redis_tls_server_name}}) {
        *value = pick(cl, env, flag, *from_file).value_or("");
    }
    s.redis_tls_insecure_skip_verify = file.redis_tls_insecure_skip_verify.value_or(false);
    if (auto text = pick(cl, env, "redis-tls-insecure-skip-verify", std::nullopt)) {
        if (*text != "on" && *text != "off") {
            return bad("redis-tls-insecure-skip-verify: expected on or off, got \"" + *text + "\"");
        }
        s.redis_tls_insecure_skip_verify = *text == "on";
    }

    // The CPUs this process may use (affinity, cgroup quota), not the host's: each thread
    // opens its own Redis connections.
    s.threads = file.threads.value_or(available_cpus());
    if (auto t = pick(cl, env, "threads", std::nullopt)) {
        int n = 0;
        auto [end, ec] = std::from_chars(t->data(), t->data() + t->size(), n);
        if (ec != std::errc{} || end != t->data() + t->size() || n < 1 || n > 256) {
            return bad("threads: expected a whole number 1..256, got \"" + *t + "\"");
        }
        s.threads = n;
    }

    if (auto level = pick(cl, env, "log-level", file.log_level)) {
        static const std::set<std::string, std::less<>> levels = {"trace", "debug", "info", "warn", "error"};
        if (!levels.contains(*level)) {
            return bad("log-level: expected trace, debug, info, warn or error, got \"" + *level + "\"");
        }
        s.log_level = *level;
    }
    if (auto format = pick(cl, env, "log-format", file.log_format)) {
        if (*format != "text" && *format != "json") {
            return bad("log-format: expected text or json, got \"" + *format + "\"");
        }
        s.log_format = *format;
    }

    s.store_timeout = file.store_timeout.value_or(s.store_timeout);
    if (auto t = pick(cl, env, "store-timeout", std::nullopt)) {
        auto d = parse_duration(*t);
        if (!d) return bad("store-timeout: " + d.error().detail);
        namespace b = policy::setting_bounds;
        if (*d < b::store_timeout_lo || *d > b::store_timeout_hi) {
            return bad("store-timeout: expected a duration from 1ms to 1m, got \"" + *t + "\"");
        }
        s.store_timeout = *d;
    }

    // A secret like the admin token: environment only (no flag, so it stays out of `ps`); it
    // wins over the file's hash_secret, which the registry keeps.
    if (const char* v = env("RATELIMITD_HASH_SECRET"); v != nullptr && *v != '\0') {
        if (std::string_view(v).size() < 16) return bad("RATELIMITD_HASH_SECRET: expected at least 16 bytes");
        s.hash_secret = v;
    }
    if (const char* v = env("RATELIMITD_ADMIN_TOKEN"); v != nullptr && *v != '\0') {
        if (std::string_view(v).size() < 16) return bad("RATELIMITD_ADMIN_TOKEN: expected at least 16 bytes");
        s.admin_token = v;
    } else {
        s.admin_token = file.admin_token;
    }
    if (auto mode = pick(cl, env, "access-log", file.access_log)) {
        if (*mode != "off" && *mode != "denied" && *mode != "all") {
            return bad("access-log: expected off, denied or all, got \"" + *mode + "\"");
        }
        s.access_log = *mode;
    }
    s.access_log_sample = file.access_log_sample.value_or(1.0);
    for (auto [flag, value] : {std::pair{"denial-cache", &s.denial_cache}, std::pair{"coalescing", &s.coalescing},
                               std::pair{"watch-config", &s.watch_config}}) {
        if (auto text = pick(cl, env, flag, std::nullopt)) {
            if (*text != "on" && *text != "off") {
                return bad(std::string(flag) + ": expected on or off, got \"" + *text + "\"");
            }
            *value = *text == "on";
        }
    }

    namespace b = policy::setting_bounds;
    if (file.max_connections) s.max_connections = static_cast<std::size_t>(*file.max_connections);
    if (auto t = pick(cl, env, "max-connections", std::nullopt)) {
        auto n = parse_count(*t, "max-connections", 1, b::max_connections_hi);
        if (!n) return n.error();
        s.max_connections = static_cast<std::size_t>(*n);
    }
    if (file.max_requests_per_connection) {
        s.max_requests_per_connection = static_cast<std::size_t>(*file.max_requests_per_connection);
    }
    if (auto t = pick(cl, env, "max-requests-per-connection", std::nullopt)) {
        auto n = parse_count(*t, "max-requests-per-connection", 1, b::max_requests_per_connection_hi);
        if (!n) return n.error();
        s.max_requests_per_connection = static_cast<std::size_t>(*n);
    }
    s.request_timeout = file.request_timeout.value_or(s.request_timeout);
    if (auto t = pick(cl, env, "request-timeout", std::nullopt)) {
        auto d = parse_duration(*t);
        if (!d) return bad("request-timeout: " + d.error().detail);
        if (*d < b::request_timeout_lo || *d > b::request_timeout_hi) {
            return bad("request-timeout: expected a duration from 100ms to 10m, got \"" + *t + "\"");
        }
        s.request_timeout = *d;
    }
    if (file.memory_max_keys) s.memory_max_keys = static_cast<std::size_t>(*file.memory_max_keys);
    if (auto t = pick(cl, env, "memory-max-keys", std::nullopt)) {
        auto n = parse_count(*t, "memory-max-keys", 0, b::memory_max_keys_hi);
        if (!n || (*n != 0 && *n < b::memory_max_keys_lo)) {
            return bad("memory-max-keys: expected 0 (no cap) or a whole number " +
                       std::to_string(b::memory_max_keys_lo) + ".." + std::to_string(b::memory_max_keys_hi) +
                       ", got \"" + *t + "\"");
        }
        s.memory_max_keys = static_cast<std::size_t>(*n);
    }
    return s;
}

}  // namespace ratelimitd::app
