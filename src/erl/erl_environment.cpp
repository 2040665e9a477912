// envoyproxy/ratelimit's environment -> ratelimitd's settings (overlay),
// runtime layout and listeners. Each variable is read through its row
// (erl_variables.hpp): unset means its default.
#include "ratelimitd/erl/erl_environment.hpp"

#include "ratelimitd/core/percent.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/erl/erl_tracing.hpp"
#include "ratelimitd/erl/erl_notify_file.hpp"
#include "ratelimitd/erl/erl_variables.hpp"
#include "ratelimitd/erl/go_values.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace ratelimitd::erl {
namespace {

namespace fs = std::filesystem;

/// A refusal on its way out of the mapper (caught in map_erl_environment).
struct Refusal : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] void refuse(std::string_view name, const std::string& why) {
    throw Refusal(std::string(name) + ": " + why);
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

bool is_secret(std::string_view name) {
    return name == "REDIS_AUTH" || name == "REDIS_SENTINEL_AUTH" || name == "REDIS_PERSECOND_AUTH" ||
           name == "REDIS_PERSECOND_SENTINEL_AUTH";
}

std::string_view type_words(ErlType type) {
    switch (type) {
        case ErlType::integer: return "a whole number";
        case ErlType::boolean: return "true or false (1, t, T, TRUE, True, 0, f, F, FALSE, False)";
        case ErlType::duration: return "a duration such as 300ms, 10s or 1h30m";
        case ErlType::number: return "a number";
        default: return "text";
    }
}

bool well_typed(ErlType type, std::string_view text) {
    switch (type) {
        case ErlType::integer: return parse_go_int(text).has_value();
        case ErlType::boolean: return parse_go_bool(text).has_value();
        case ErlType::duration: return parse_go_duration(text).has_value();
        case ErlType::number: return parse_go_number(text).has_value();
        default: return true;
    }
}

/// The variables as envoyproxy/ratelimit sees them: each set one checked
/// against its row's type (as its envconfig refuses a bad one), unset ones at
/// their default.
class ErlReader {
public:
    ErlReader(const config::EnvLookup& env) : env_(env) {}

    /// The text of `name` (a row of the table), its default when unset.
    std::string text(std::string_view name) const {
        const ErlVariable& row = this->row(name);
        const char* v = env_(std::string(name).c_str());
        // envconfig takes an empty variable as set and empty; for the types below
        // an empty value would fail to parse there, so it counts as unset here only
        // for text.
        if (v == nullptr) return std::string(row.erl_default);
        std::string value(v);
        if (!well_typed(row.type, value)) {
            refuse(name, "expected " + std::string(type_words(row.type)) + ", got " +
                             (is_secret(name) ? std::string("a value") : quote(value, 64)));
        }
        return value;
    }
    bool is_set(std::string_view name) const { return env_(std::string(name).c_str()) != nullptr; }
    /// A variable of ratelimitd's own ERL mode (no row of the table): its text, or nothing.
    std::optional<std::string> own(std::string_view name) const {
        const char* v = env_(std::string(name).c_str());
        return v == nullptr ? std::nullopt : std::optional<std::string>(v);
    }
    bool flag(std::string_view name) const { return *parse_go_bool(text_or(name, "false")); }
    std::int64_t integer(std::string_view name) const { return parse_go_int(text_or(name, "0")).value_or(0); }
    std::chrono::milliseconds duration(std::string_view name) const {
        return parse_go_duration(text_or(name, "0")).value_or(std::chrono::milliseconds{0});
    }

    /// Checks every row: each set variable's type, and the refused rows at their
    /// default.
    void check_all() const {
        for (const ErlVariable& row : erl_variables()) {
            const std::string value = text(row.name);
            if (row.use == ErlUse::refused && is_set(row.name) && differs_from_default(row, value)) {
                refuse(row.name, "set to " + quote(value, 64) + ": " + std::string(row.ours));
            }
        }
    }

private:
    static const ErlVariable& row(std::string_view name) {
        const ErlVariable* r = find_erl_variable(name);
        if (r == nullptr) throw std::logic_error("ERL mode reads a variable its table lacks: " + std::string(name));
        return *r;
    }
    std::string text_or(std::string_view name, std::string_view fallback) const {
        std::string t = text(name);
        return t.empty() ? std::string(fallback) : t;
    }
    static bool differs_from_default(const ErlVariable& row, const std::string& value) {
        if (row.type == ErlType::boolean) {
            return *parse_go_bool(value) != parse_go_bool(row.erl_default).value_or(false);
        }
        return value != row.erl_default;
    }

    const config::EnvLookup& env_;
};

std::string host_port(std::string_view host, std::int64_t port, std::string_view port_name) {
    if (port < 0 || port > 65535) refuse(port_name, "expected a port 0..65535, got " + std::to_string(port));
    const bool v6 = host.find(':') != std::string_view::npos;
    return (v6 ? "[" + std::string(host) + "]" : std::string(host.empty() ? "0.0.0.0" : host)) + ":" +
           std::to_string(port);
}

/// PROMETHEUS_ADDR as Go's net/http reads it: ":9090" listens on every address.
std::string listen_address(std::string_view addr, std::string_view name) {
    const auto colon = addr.rfind(':');
    if (colon == std::string_view::npos) refuse(name, "expected HOST:PORT or :PORT, got " + quote(addr, 64));
    std::string_view host = addr.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    const auto port = parse_go_int(addr.substr(colon + 1));
    if (!port) refuse(name, "expected HOST:PORT or :PORT, got " + quote(addr, 64));
    return host_port(host, *port, name);
}

std::string log_level(std::string_view text) {
    const std::string level = lower(text);
    if (level == "panic" || level == "fatal" || level == "error") return "error";
    if (level == "warn" || level == "warning") return "warn";
    if (level == "info" || level == "debug" || level == "trace") return level;
    refuse("LOG_LEVEL",
           "expected one of panic, fatal, error, warn, warning, info, debug, trace (any case), got " + quote(text, 64));
}

bool keep_unreserved(unsigned char c) noexcept {
    return std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~';
}

std::vector<std::string> split_commas(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const auto comma = text.find(',', start);
        std::string item(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        out.push_back(std::move(item));
        if (comma == std::string_view::npos) return out;
        start = comma + 1;
    }
}

void check_host_port(const std::string& item, std::string_view name) {
    const auto colon = item.rfind(':');
    if (item.empty() || colon == std::string::npos || colon == 0 || !parse_go_int(item.substr(colon + 1))) {
        refuse(name, "expected host:port (a comma list for sentinel and cluster), got " + quote(item, 128));
    }
}

/// One Redis's variables: REDIS_<suffix>, or REDIS_PERSECOND_<suffix> for the per-second one.
struct RedisNames {
    std::string_view prefix;  // "REDIS_" or "REDIS_PERSECOND_"
    std::string operator()(std::string_view suffix) const { return std::string(prefix) + std::string(suffix); }
};

/// The Redis user:password@ of <prefix>AUTH, as envoyproxy/ratelimit splits it: "user:password"
/// (Redis 6 ACL) or a password alone; empty without one.
std::string redis_auth(const ErlReader& r, const RedisNames& name) {
    const std::string a = r.text(name("AUTH"));
    if (a.empty()) return "";
    const auto colon = a.find(':');
    std::string auth = colon == std::string::npos ? ":" + percent_encode(a, keep_unreserved)
                                                  : percent_encode(a.substr(0, colon), keep_unreserved) + ":" +
                                                        percent_encode(a.substr(colon + 1), keep_unreserved);
    return auth + "@";
}

/// <prefix>SOCKET_TYPE, checked (tcp only), and <prefix>TYPE, lower-cased.
std::string redis_type(const ErlReader& r, const RedisNames& name) {
    const std::string socket_name = name("SOCKET_TYPE");
    const std::string socket = lower(r.text(socket_name));
    if (socket == "unix") {
        refuse(socket_name, std::string(r.is_set(socket_name) ? "unix" : "unix (its default)") +
                                " is not supported: ratelimitd reaches Redis over TCP; set " + socket_name +
                                "=tcp and " + name("URL") + "=host:port");
    }
    if (socket != "tcp") refuse(socket_name, "expected tcp, got " + quote(socket, 64));
    const std::string type = lower(r.text(name("TYPE")));
    if (type != "single" && type != "sentinel" && type != "cluster") {
        refuse(name("TYPE"), "expected single, sentinel or cluster, got " + quote(type, 64));
    }
    return type;
}

/// <prefix>SOCKET_TYPE, TYPE, URL, AUTH, SENTINEL_AUTH and TLS as one URL.
std::string redis_url(const ErlReader& r, const RedisNames& name) {
    const std::string type = redis_type(r, name);
    const std::string url_name = name("URL");
    auto items = split_commas(r.text(url_name));
    std::string master;
    if (type == "sentinel") {
        if (items.size() < 2 || items.front().empty()) {
            refuse(url_name, name("TYPE") + "=sentinel expects <master name>,<sentinel host:port>,...");
        }
        master = items.front();
        items.erase(items.begin());
    } else if (type == "single" && items.size() != 1) {
        refuse(url_name, name("TYPE") + "=single expects one host:port; a comma list needs " + name("TYPE") +
                             " cluster or sentinel");
    }
    std::string hosts;
    for (const auto& item : items) {
        check_host_port(item, url_name);
        hosts += (hosts.empty() ? "" : ",") + item;
    }
    const std::string scheme = std::string(r.flag(name("TLS")) ? "rediss" : "redis") +
                               (type == "sentinel"  ? "-sentinel"
                                : type == "cluster" ? "-cluster"
                                                    : "") +
                               "://";
    std::string url = scheme + redis_auth(r, name) + hosts;
    if (type == "sentinel") {
        url += "/" + percent_encode(master, keep_unreserved);
        if (const std::string s = r.text(name("SENTINEL_AUTH")); !s.empty()) {
            url += "?sentinel_password=" + percent_encode(s, keep_unreserved);
        }
    }
    return url;
}

void map_redis(const ErlReader& r, ErlMode& out) {
    const std::string backend = lower(r.text("BACKEND_TYPE"));
    if (backend == "memcache") {
        refuse("BACKEND_TYPE", "memcache is not supported: ratelimitd counts in Redis (BACKEND_TYPE=redis)");
    }
    if (backend != "redis" && !backend.empty()) refuse("BACKEND_TYPE", "expected redis, got " + quote(backend, 64));
    const std::string on_empty = r.text("REDIS_POOL_ON_EMPTY_BEHAVIOR");
    if (lower(on_empty) != "wait") {
        // envoyproxy/ratelimit refuses these at start too (its Redis client cannot
        // honour them).
        refuse("REDIS_POOL_ON_EMPTY_BEHAVIOR", quote(on_empty, 64) + " is not supported: only WAIT");
    }
    out.overlay["RATELIMITD_REDIS_URL"] = redis_url(r, RedisNames{"REDIS_"});
    // REDIS_PERSECOND: the counters of SECOND limits in a second Redis, reached with the same
    // TLS files (envoyproxy/ratelimit builds one TLS config for both).
    if (r.flag("REDIS_PERSECOND")) {
        if (const std::string ps = r.text("REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR"); lower(ps) != "wait") {
            refuse("REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR", quote(ps, 64) + " is not supported: only WAIT");
        }
        out.overlay["RATELIMITD_REDIS_PER_SECOND_URL"] = redis_url(r, RedisNames{"REDIS_PERSECOND_"});
    }
    const std::pair<std::string_view, std::string_view> files[] = {
        {"REDIS_TLS_CACERT", "RATELIMITD_REDIS_TLS_CA"},
        {"REDIS_TLS_CLIENT_CERT", "RATELIMITD_REDIS_TLS_CERT"},
        {"REDIS_TLS_CLIENT_KEY", "RATELIMITD_REDIS_TLS_KEY"}};
    for (const auto& [erl_name, ours] : files) {
        if (const std::string v = r.text(erl_name); !v.empty()) out.overlay[std::string(ours)] = v;
    }
    if (r.flag("REDIS_TLS_SKIP_HOSTNAME_VERIFICATION")) {
        out.overlay["RATELIMITD_REDIS_TLS_INSECURE_SKIP_VERIFY"] = "on";
        out.warnings.push_back(
            "REDIS_TLS_SKIP_HOSTNAME_VERIFICATION=true: ratelimitd then accepts any certificate from Redis, not only "
            "one with another name; set REDIS_TLS_CACERT and keep it false");
    }
    out.overlay["RATELIMITD_DENIAL_CACHE"] = r.integer("LOCAL_CACHE_SIZE_IN_BYTES") > 0 ? "on" : "off";
    out.healthcheck_pings_store = r.flag("REDIS_HEALTH_CHECK_ACTIVE_CONNECTION");
}

void map_listeners(const ErlReader& r, ErlMode& out) {
    out.overlay["RATELIMITD_LISTEN"] = host_port(r.text("HOST"), r.integer("PORT"), "PORT");
    out.overlay["RATELIMITD_GRPC_LISTEN"] = host_port(r.text("GRPC_HOST"), r.integer("GRPC_PORT"), "GRPC_PORT");
    out.debug_listen = host_port(r.text("DEBUG_HOST"), r.integer("DEBUG_PORT"), "DEBUG_PORT");
    const auto age = r.duration("GRPC_MAX_CONNECTION_AGE");
    out.overlay["RATELIMITD_GRPC_MAX_CONNECTION_AGE"] = std::to_string(age.count()) + "ms";
    if (r.flag("GRPC_SERVER_USE_TLS")) out.overlay["RATELIMITD_GRPC_TLS"] = "on";
    const std::pair<std::string_view, std::string_view> files[] = {
        {"GRPC_SERVER_TLS_CERT", "RATELIMITD_GRPC_TLS_CERT"},
        {"GRPC_SERVER_TLS_KEY", "RATELIMITD_GRPC_TLS_KEY"},
        {"GRPC_CLIENT_TLS_CACERT", "RATELIMITD_GRPC_TLS_CLIENT_CA"},
        {"GRPC_CLIENT_TLS_SAN", "RATELIMITD_GRPC_TLS_CLIENT_SAN"}};
    // envoyproxy/ratelimit reads the files only with GRPC_SERVER_USE_TLS=true: so
    // do we.
    if (r.flag("GRPC_SERVER_USE_TLS")) {
        for (const auto& [erl_name, ours] : files) {
            if (const std::string v = r.text(erl_name); !v.empty()) out.overlay[std::string(ours)] = v;
        }
    }
    if (r.flag("USE_PROMETHEUS")) out.prometheus_listen = listen_address(r.text("PROMETHEUS_ADDR"), "PROMETHEUS_ADDR");
}

// EXTRA_TAGS as envconfig reads a map: "k1:v1,k2:v2".
std::vector<std::pair<std::string, std::string>> extra_tags(const std::string& text) {
    std::vector<std::pair<std::string, std::string>> out;
    if (text.empty()) return out;
    for (const auto& item : split_commas(text)) {
        const auto colon = item.find(':');
        if (colon == std::string::npos || colon == 0) refuse("EXTRA_TAGS", "expected k1:v1,k2:v2, got " + quote(item, 64));
        out.emplace_back(item.substr(0, colon), item.substr(colon + 1));
    }
    return out;
}

void map_stats(const ErlReader& r, ErlMode& out) {
    ErlStatsSetup& s = out.stats;
    s.statsd = r.flag("USE_STATSD");
    s.prometheus = r.flag("USE_PROMETHEUS");
    if (s.statsd && s.prometheus) {
        // envoyproxy/ratelimit refuses to start so too (one stats sink at a time).
        refuse("USE_STATSD", std::string(r.is_set("USE_STATSD") ? "true" : "true (its default)") +
                                 " with USE_PROMETHEUS=true: one stats sink at a time; set USE_STATSD=false");
    }
    if (r.flag("USE_DOG_STATSD")) {
        out.warnings.push_back("USE_DOG_STATSD=true: DogStatsD is not supported; use USE_STATSD or USE_PROMETHEUS");
    }
    s.statsd_host = r.text("STATSD_HOST");
    const auto port = r.integer("STATSD_PORT");
    if (s.statsd && (port < 1 || port > 65535)) refuse("STATSD_PORT", "expected a port 1..65535, got " + std::to_string(port));
    s.statsd_port = static_cast<unsigned short>(port);
    s.tags = extra_tags(r.text("EXTRA_TAGS"));
    s.flush_interval = r.duration("STATS_FLUSH_INTERVAL");
    if (s.statsd && s.flush_interval.count() <= 0) {
        refuse("STATS_FLUSH_INTERVAL", "expected a duration above 0, got " + quote(r.text("STATS_FLUSH_INTERVAL"), 64));
    }
    s.mapper_file = r.text("PROMETHEUS_MAPPER_YAML");
    s.near_limit_ratio = static_cast<float>(parse_go_number(r.text("NEAR_LIMIT_RATIO")).value_or(0.8));
    s.counted = (s.statsd || s.prometheus) && !r.flag("DISABLE_STATS");
}

void map_logging_and_stats(const ErlReader& r, ErlMode& out) {
    out.overlay["RATELIMITD_LOG_LEVEL"] = log_level(r.text("LOG_LEVEL"));
    out.overlay["RATELIMITD_LOG_FORMAT"] = lower(r.text("LOG_FORMAT")) == "json" ? "json" : "text";
    map_stats(r, out);
    const ErlTracing tracing{r.flag("TRACING_ENABLED"), r.text("TRACING_EXPORTER_PROTOCOL"), r.text("TRACING_SERVICE_NAME"),
                             r.text("TRACING_SERVICE_NAMESPACE"), r.text("TRACING_SERVICE_INSTANCE_ID"),
                             r.text("TRACING_SAMPLING_RATE")};
    auto overlay = erl_tracing_overlay(tracing);
    if (!overlay) throw Refusal(overlay.error().detail);
    out.overlay.merge(*overlay);
}

void map_response_headers(const ErlReader& r, ErlMode& out) {
    // Its default adds nothing to the client's response; enabled, its three fields by its names.
    if (!r.flag("LIMIT_RESPONSE_HEADERS_ENABLED")) {
        out.overlay["RATELIMITD_GRPC_RESPONSE_HEADERS"] = "none";
        return;
    }
    out.overlay["RATELIMITD_GRPC_RESPONSE_HEADERS"] = "erl";
    out.overlay["RATELIMITD_GRPC_LIMIT_HEADER"] = r.text("LIMIT_LIMIT_HEADER");
    out.overlay["RATELIMITD_GRPC_REMAINING_HEADER"] = r.text("LIMIT_REMAINING_HEADER");
    out.overlay["RATELIMITD_GRPC_RESET_HEADER"] = r.text("LIMIT_RESET_HEADER");
}

void map_keys(const ErlReader& r, ErlMode& out) {
    out.overlay["RATELIMITD_ENVOY_KEY_LAYOUT"] = "envoyproxy-ratelimit";
    if (const std::string prefix = r.text("CACHE_KEY_PREFIX"); !prefix.empty()) {
        out.overlay["RATELIMITD_ENVOY_KEY_PREFIX"] = prefix;
    }
    const auto jitter = r.integer("EXPIRATION_JITTER_MAX_SECONDS");
    if (jitter < 0)
        refuse("EXPIRATION_JITTER_MAX_SECONDS", "expected 0 or more seconds, got " + std::to_string(jitter));
    out.overlay["RATELIMITD_ENVOY_EXPIRATION_JITTER"] = std::to_string(jitter) + "s";
    out.charge_denied = !r.flag("STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT");
    if (r.flag("SHADOW_MODE")) out.overlay["RATELIMITD_ENVOY_SHADOW_MODE"] = "on";
    if (r.flag("QUOTA_MODE")) out.overlay["RATELIMITD_ENVOY_QUOTA_MODE"] = "on";
}

// envoyproxy/ratelimit answers a store error with a gRPC error (Envoy's failure_mode_deny
// decides): ratelimitd's default too (envoy_store_error: unavailable). REDIS_ERROR_ANSWER, a
// variable of ERL mode only, chooses otherwise with the codes an ERL operator knows.
void map_store_error(const ErlReader& r, ErlMode& out) {
    const auto answer = r.own(store_error_variable);
    if (!answer) return;
    const std::string code = lower(*answer);
    if (code == "unavailable") {
        out.overlay["RATELIMITD_ENVOY_STORE_ERROR"] = "unavailable";
    } else if (code == "ok") {
        out.overlay["RATELIMITD_ENVOY_STORE_ERROR"] = "allow";
    } else if (code == "over_limit") {
        out.overlay["RATELIMITD_ENVOY_STORE_ERROR"] = "deny";
    } else {
        refuse(store_error_variable, "expected UNAVAILABLE, OK or OVER_LIMIT, got " + quote(*answer, 64));
    }
}

void map_runtime(const ErlReader& r, const std::string& cwd, ErlMode& out) {
    RuntimeLayout layout;
    layout.root = r.text("RUNTIME_ROOT");
    if (layout.root.empty()) refuse("RUNTIME_ROOT", "expected a directory, got an empty value");
    if (fs::path(layout.root).is_relative()) layout.root = (fs::path(cwd) / layout.root).lexically_normal().string();
    layout.subdirectory = r.text("RUNTIME_SUBDIRECTORY");
    layout.app_directory = r.text("RUNTIME_APPDIRECTORY");
    layout.ignore_dot_files = r.flag("RUNTIME_IGNOREDOTFILES");
    layout.watch_root = r.flag("RUNTIME_WATCH_ROOT");
    layout.merge_domains = r.flag("MERGE_DOMAIN_CONFIG");
    out.runtime = std::move(layout);
}

/// CONFIG_TYPE=GRPC_XDS_SOTW: the xDS client's settings (docs/envoy.md, "xDS").
void map_xds(const ErlReader& r, ErlMode& out) {
    auto& o = out.overlay;
    o["RATELIMITD_XDS_SERVER"] = r.text("CONFIG_GRPC_XDS_SERVER_URL");
    o["RATELIMITD_XDS_NODE_ID"] = r.text("CONFIG_GRPC_XDS_NODE_ID");
    if (const auto m = r.text("CONFIG_GRPC_XDS_NODE_METADATA"); !m.empty()) o["RATELIMITD_XDS_NODE_METADATA"] = m;
    if (const auto h = r.text("CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS"); !h.empty()) o["RATELIMITD_XDS_HEADERS"] = h;
    o["RATELIMITD_XDS_TLS"] = r.flag("CONFIG_GRPC_XDS_SERVER_USE_TLS") ? "on" : "off";
    const std::pair<std::string_view, std::string_view> files[] = {
        {"CONFIG_GRPC_XDS_CLIENT_TLS_CERT", "RATELIMITD_XDS_TLS_CERT"},
        {"CONFIG_GRPC_XDS_CLIENT_TLS_KEY", "RATELIMITD_XDS_TLS_KEY"},
        {"CONFIG_GRPC_XDS_SERVER_TLS_CACERT", "RATELIMITD_XDS_TLS_CA"},
        {"CONFIG_GRPC_XDS_SERVER_TLS_SAN", "RATELIMITD_XDS_TLS_SERVER_SAN"}};
    for (const auto& [erl_name, ours] : files) {
        if (const std::string v = r.text(erl_name); !v.empty()) o[std::string(ours)] = v;
    }
    const std::pair<std::string_view, std::string_view> durations[] = {
        {"CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL", "RATELIMITD_XDS_RETRY_INTERVAL"},
        {"XDS_CLIENT_BACKOFF_INITIAL_INTERVAL", "RATELIMITD_XDS_BACKOFF_INITIAL"},
        {"XDS_CLIENT_BACKOFF_MAX_INTERVAL", "RATELIMITD_XDS_BACKOFF_MAX"}};
    for (const auto& [erl_name, ours] : durations)
        o[std::string(ours)] = std::to_string(r.duration(erl_name).count()) + "ms";
    o["RATELIMITD_XDS_BACKOFF_RANDOM_FACTOR"] = r.text("XDS_CLIENT_BACKOFF_RANDOM_FACTOR");
    o["RATELIMITD_XDS_BACKOFF_JITTER"] = r.flag("XDS_CLIENT_BACKOFF_JITTER") ? "on" : "off";
    if (const auto n = r.text("XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES"); !n.empty())
        o["RATELIMITD_XDS_MAX_MESSAGE_BYTES"] = n;
}

void map_config_source(const ErlReader& r, const std::string& cwd, ErlMode& out) {
    const std::string type = r.text("CONFIG_TYPE");
    if (type == "FILE") {
        map_runtime(r, cwd, out);
    } else if (type == "GRPC_XDS_SOTW") {
        map_xds(r, out);
    } else {
        refuse("CONFIG_TYPE", "expected FILE or GRPC_XDS_SOTW, got " + quote(type, 64));
    }
    out.healthcheck_needs_domain = r.flag("HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED");
}

}  // namespace

std::string RuntimeLayout::config_directory() const {
    return (fs::path(root) / subdirectory / app_directory).lexically_normal().string();
}

result<ErlMode> map_erl_environment(const config::EnvLookup& env, const std::string& cwd) {
    try {
        const ErlReader reader(env);
        reader.check_all();
        ErlMode out;
        map_redis(reader, out);
        map_listeners(reader, out);
        map_logging_and_stats(reader, out);
        map_response_headers(reader, out);
        map_keys(reader, out);
        map_store_error(reader, out);
        map_config_source(reader, cwd, out);
        if (auto file = notify_file_path(env, cwd)) out.notify_file = std::move(*file); else return file.error();
        return out;
    } catch (const Refusal& e) {
        return Problem{errc::invalid_request, e.what()};
    }
}

config::EnvLookup overlay_lookup(const ErlMode& mode, config::EnvLookup fallback) {
    return [&mode, fallback = std::move(fallback)](const char* name) -> const char* {
        if (auto it = mode.overlay.find(name); it != mode.overlay.end()) return it->second.c_str();
        return fallback(name);
    };
}

bool started_as_ratelimit(const char* argv0) noexcept {
    if (argv0 == nullptr) return false;
    const std::string_view path(argv0);
    const auto slash = path.rfind('/');
    return (slash == std::string_view::npos ? path : path.substr(slash + 1)) == "ratelimit";
}

}  // namespace ratelimitd::erl
