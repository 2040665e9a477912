// The rows of the process settings table. A new setting is a Settings field (and its
// FileSettings twin when the file may set it), one row here, and its test.
#include "ratelimitd/config/setting_table.hpp"

#include "ratelimitd/config/setting_values.hpp"

#include <array>
#include <type_traits>

namespace ratelimitd::config {
namespace {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

// A value of the row's type into a field of any matching C++ type.
template <class T>
void assign(T& out, const SettingValue& v) {
    if constexpr (is_optional<T>::value) {
        typename T::value_type inner{};
        assign(inner, v);
        out = std::move(inner);
    } else if constexpr (std::is_same_v<T, bool>) {
        out = std::get<bool>(v);
    } else if constexpr (std::is_integral_v<T>) {
        out = static_cast<T>(std::get<std::int64_t>(v));
    } else {
        out = std::get<T>(v);
    }
}

template <class T>
SettingValue to_value(const T& x) {
    if constexpr (std::is_same_v<T, bool>) return SettingValue(std::in_place_type<bool>, x);
    else if constexpr (std::is_integral_v<T>) return SettingValue(std::in_place_type<std::int64_t>, x);
    else return SettingValue(x);
}

template <auto Member>
void apply_to(Settings& s, const SettingValue& v) {
    assign(s.*Member, v);
}

template <auto Member>
void keep_in(FileSettings& f, const SettingValue& v) {
    assign(f.*Member, v);
}

template <auto Member>
std::optional<SettingValue> kept_in(const FileSettings& f) {
    const auto& field = f.*Member;
    if (!field) return std::nullopt;
    return to_value(*field);
}

/// A setting the file may hold too.
template <auto SettingsMember, auto FileMember>
constexpr SettingField both() {
    return {&apply_to<SettingsMember>, &keep_in<FileMember>, &kept_in<FileMember>};
}

/// A setting of flags and environment only.
template <auto SettingsMember>
constexpr SettingField text_only() {
    return {&apply_to<SettingsMember>, nullptr, nullptr};
}

// Checked by SettingType::listen before it gets here.
void apply_listen(Settings& s, const SettingValue& v) {
    const auto host_port = parse_listen(std::get<std::string>(v));
    s.listen_host = host_port->first;
    s.listen_port = host_port->second;
}

constexpr std::array<std::string_view, 5> log_levels{"trace", "debug", "info", "warn", "error"};
constexpr std::array<std::string_view, 2> log_formats{"text", "json"};
constexpr std::array<std::string_view, 3> grpc_header_sets{"ietf", "none", "erl"};
constexpr std::array<std::string_view, 3> access_log_modes{"off", "denied", "all"};
constexpr std::array<std::string_view, 2> envoy_key_layouts{"ratelimitd", "envoyproxy-ratelimit"};
constexpr std::array<std::string_view, 3> envoy_store_errors{"unavailable", "allow", "deny"};
constexpr std::array<std::string_view, 2> redis_state_layouts{"string", "hash"};
constexpr std::array<std::string_view, 2> trace_protocols{"http/protobuf", "grpc"};
// OTEL_TRACES_SAMPLER's values (trace::Sampler::named).
constexpr std::array<std::string_view, 6> trace_samplers{"parentbased_traceidratio", "parentbased_always_on",
                                                         "parentbased_always_off", "traceidratio", "always_on",
                                                         "always_off"};

using T = SettingType;

// constexpr: initialised before any code runs, so another file's statics may read the table.
constexpr SettingRow rows[] = {
    {.flag = "config", .env = "RATELIMITD_CONFIG", .type = T::path, .value_name = "FILE",
     .default_text = "required", .help = "the config file (.yaml, .yml or .json)",
     .field = text_only<&Settings::config_path>()},
    {.file_key = "listen", .flag = "listen", .env = "RATELIMITD_LISTEN", .type = T::listen,
     .value_name = "HOST:PORT", .default_text = "127.0.0.1:8080",
     .help = "address to serve on; port 0 picks a free port",
     .field = {&apply_listen, &keep_in<&FileSettings::listen>, &kept_in<&FileSettings::listen>}},
    {.file_key = "redis", .flag = "redis", .env = "RATELIMITD_REDIS_URL", .env_alias = "RATELIMITD_REDIS",
     .type = T::redis_url, .value_name = "URL", .default_text = "none: the embedded store",
     .help = "the Redis store (URL forms below)",
     .field = both<&Settings::redis_url, &FileSettings::redis>()},
    {.file_key = "redis_per_second", .flag = "redis-per-second", .env = "RATELIMITD_REDIS_PER_SECOND_URL",
     .env_alias = "RATELIMITD_REDIS_PER_SECOND",
     .type = T::redis_url, .value_name = "URL", .default_text = "none: one store for every unit",
     .help = "a second Redis for the counters of envoyproxy/ratelimit's SECOND limits (needs --redis)",
     .field = both<&Settings::redis_per_second_url, &FileSettings::redis_per_second>()},
    {.file_key = "threads", .flag = "threads", .env = "RATELIMITD_THREADS", .type = T::count, .lo = 1,
     .hi = 256, .value_name = "N", .default_text = "the CPUs this process may use",
     .help = "event loops, each with its own Redis connections",
     .field = both<&Settings::threads, &FileSettings::threads>()},
    {.file_key = "log_level", .flag = "log-level", .env = "RATELIMITD_LOG_LEVEL", .type = T::choice,
     .choices = log_levels, .default_text = "info", .help = "least severity logged",
     .field = both<&Settings::log_level, &FileSettings::log_level>()},
    {.file_key = "log_format", .flag = "log-format", .env = "RATELIMITD_LOG_FORMAT", .type = T::choice,
     .choices = log_formats, .default_text = "text", .help = "log lines on stderr as text or JSON",
     .field = both<&Settings::log_format, &FileSettings::log_format>()},
    // A deadline far beyond any store's answer is a typo, and near the clock's range it overflows.
    {.file_key = "store_timeout", .flag = "store-timeout", .env = "RATELIMITD_STORE_TIMEOUT",
     .type = T::duration, .lo = 1, .hi = 60'000, .value_name = "DURATION", .default_text = "50ms",
     .help = "longest wait for the store's answer; then the policy's on_store_error decides",
     .field = both<&Settings::store_timeout, &FileSettings::store_timeout>()},
    // Secrets have no flag, so they stay out of `ps`.
    {.env = "RATELIMITD_HASH_SECRET", .type = T::secret, .lo = 16,
     .default_text = "none (the file's hash_secret, a registry key)",
     .help = "key of the hash of secret identities; wins over the file's hash_secret",
     .field = text_only<&Settings::hash_secret>()},
    {.file_key = "admin_token", .env = "RATELIMITD_ADMIN_TOKEN", .type = T::secret, .lo = 16,
     .default_text = "none: admin endpoints answer loopback peers only",
     .help = "bearer token of the admin endpoints",
     .field = both<&Settings::admin_token, &FileSettings::admin_token>()},
    {.file_key = "access_log", .flag = "access-log", .env = "RATELIMITD_ACCESS_LOG", .type = T::choice,
     .choices = access_log_modes, .default_text = "off", .help = "which answers get an access log line",
     .field = both<&Settings::access_log, &FileSettings::access_log>()},
    {.file_key = "access_log_sample", .type = T::fraction, .default_text = "1.0",
     .help = "share of those answers logged",
     .field = both<&Settings::access_log_sample, &FileSettings::access_log_sample>()},
    // Apart from the access log: reloads, resets, refunds and admin calls (docs/operations.md).
    {.file_key = "audit_log", .flag = "audit-log", .env = "RATELIMITD_AUDIT_LOG", .type = T::path,
     .value_name = "stderr|PATH", .default_text = "none: no audit log (GET /v1/audit still answers)",
     .help = "where the audit trail's JSON lines go: stderr, or a file opened for appending",
     .field = both<&Settings::audit_log, &FileSettings::audit_log>()},
    {.flag = "denial-cache", .env = "RATELIMITD_DENIAL_CACHE", .type = T::on_off, .default_text = "on",
     .help = "answer repeated denials in process (Redis stores)",
     .field = text_only<&Settings::denial_cache>()},
    {.flag = "coalescing", .env = "RATELIMITD_COALESCING", .type = T::on_off, .default_text = "on",
     .help = "send checks waiting together as one script call (Redis stores)",
     .field = text_only<&Settings::coalescing>()},
    {.flag = "watch-config", .env = "RATELIMITD_WATCH_CONFIG", .type = T::on_off, .default_text = "on",
     .help = "reload the config file when it changes, as SIGHUP does",
     .field = text_only<&Settings::watch_config>()},
    {.file_key = "max_connections", .flag = "max-connections", .env = "RATELIMITD_MAX_CONNECTIONS",
     .type = T::count, .lo = 1, .hi = 1'000'000, .value_name = "N", .default_text = "10000",
     .help = "connections open at once; one more gets 503 and is closed",
     .field = both<&Settings::max_connections, &FileSettings::max_connections>()},
    {.file_key = "max_requests_per_connection", .flag = "max-requests-per-connection",
     .env = "RATELIMITD_MAX_REQUESTS_PER_CONNECTION", .type = T::count, .lo = 1, .hi = 1'000'000'000,
     .value_name = "N", .default_text = "10000",
     .help = "requests served on one connection; the last answer closes it",
     .field = both<&Settings::max_requests_per_connection, &FileSettings::max_requests_per_connection>()},
    {.file_key = "request_timeout", .flag = "request-timeout", .env = "RATELIMITD_REQUEST_TIMEOUT",
     .type = T::duration, .lo = 100, .hi = 600'000, .value_name = "DURATION", .default_text = "10s",
     .help = "to receive a whole request once it has begun",
     .field = both<&Settings::request_timeout, &FileSettings::request_timeout>()},
    // Each held answer keeps a connection and a timer; the proxy in front holds its client too.
    {.file_key = "max_held_requests", .flag = "max-held-requests", .env = "RATELIMITD_MAX_HELD_REQUESTS",
     .type = T::count, .lo = 1, .hi = 1'000'000, .value_name = "N", .default_text = "1000",
     .help = "delayed /v1/auth answers held at once (max_delay policies); one more is denied",
     .field = both<&Settings::max_held_requests, &FileSettings::max_held_requests>()},
    // 0 is "no cap"; below one key per shard of the embedded store a cap means nothing.
    {.file_key = "memory_max_keys", .flag = "memory-max-keys", .env = "RATELIMITD_MEMORY_MAX_KEYS",
     .type = T::count, .lo = 64, .hi = 1'000'000'000, .zero_allowed = true, .value_name = "N",
     .default_text = "1000000", .help = "most keys the embedded store holds; 0: no cap",
     .field = both<&Settings::memory_max_keys, &FileSettings::memory_max_keys>()},
    // Each sketch scans its K slots per count: past a few hundred that costs the hot path.
    {.file_key = "top_k", .flag = "top-k", .env = "RATELIMITD_TOP_K", .type = T::count, .lo = 1, .hi = 500,
     .zero_allowed = true, .value_name = "N", .default_text = "20",
     .help = "heavy hitters (GET /v1/top) kept per policy and slice; 0: off",
     .field = both<&Settings::top_k, &FileSettings::top_k>()},
    // Five slices of at least a second each; longer than a day is no longer "right now".
    {.file_key = "top_window", .flag = "top-window", .env = "RATELIMITD_TOP_WINDOW", .type = T::duration,
     .lo = 5'000, .hi = 86'400'000, .value_name = "DURATION", .default_text = "5m",
     .help = "how far back the heavy hitters look, in 5 slices",
     .field = both<&Settings::top_window, &FileSettings::top_window>()},
    // Events wait here while receivers are slow or down; each is under 1 KiB.
    {.file_key = "notify_queue", .flag = "notify-queue", .env = "RATELIMITD_NOTIFY_QUEUE", .type = T::count,
     .lo = 1, .hi = 1'000'000, .value_name = "N", .default_text = "10000",
     .help = "quota webhook events waiting to be sent; beyond it they are dropped and counted",
     .field = both<&Settings::notify_queue, &FileSettings::notify_queue>()},
    {.file_key = "redis_tls_ca", .flag = "redis-tls-ca", .env = "RATELIMITD_REDIS_TLS_CA", .type = T::path,
     .value_name = "FILE", .default_text = "the system's CA store",
     .help = "rediss://: the CA bundle (PEM) that signs the server's certificate",
     .field = both<&Settings::redis_tls_ca, &FileSettings::redis_tls_ca>()},
    {.file_key = "redis_tls_cert", .flag = "redis-tls-cert", .env = "RATELIMITD_REDIS_TLS_CERT", .type = T::path,
     .value_name = "FILE", .default_text = "none", .help = "rediss://: client certificate (PEM), with the key",
     .field = both<&Settings::redis_tls_cert, &FileSettings::redis_tls_cert>()},
    {.file_key = "redis_tls_key", .flag = "redis-tls-key", .env = "RATELIMITD_REDIS_TLS_KEY", .type = T::path,
     .value_name = "FILE", .default_text = "none", .help = "rediss://: the client certificate's private key (PEM)",
     .field = both<&Settings::redis_tls_key, &FileSettings::redis_tls_key>()},
    {.file_key = "redis_tls_server_name", .flag = "redis-tls-server-name", .env = "RATELIMITD_REDIS_TLS_SERVER_NAME",
     .type = T::path, .value_name = "NAME", .default_text = "the URL's host",
     .help = "rediss://: the name sent (SNI) and verified in the server's certificate",
     .field = both<&Settings::redis_tls_server_name, &FileSettings::redis_tls_server_name>()},
    {.file_key = "redis_tls_insecure_skip_verify", .flag = "redis-tls-insecure-skip-verify",
     .env = "RATELIMITD_REDIS_TLS_INSECURE_SKIP_VERIFY", .type = T::on_off, .default_text = "off",
     .help = "rediss://: accept any certificate (warned about every minute)",
     .field = both<&Settings::redis_tls_insecure_skip_verify, &FileSettings::redis_tls_insecure_skip_verify>()},
    // Earlier versions read a string bucket as another algorithm's key (a full bucket): while
    // any of them still runs on the same Redis, the fleet writes their hash (docs/operations.md).
    {.file_key = "redis_state_layout", .flag = "redis-state-layout", .env = "RATELIMITD_REDIS_STATE_LAYOUT",
     .type = T::choice, .choices = redis_state_layouts, .default_text = "string",
     .help = "token buckets in Redis: one string, or the hash earlier versions read (during an upgrade)",
     .field = both<&Settings::redis_state_layout, &FileSettings::redis_state_layout>()},
    // Envoy's rate limit service (docs/envoy.md); off unless set.
    {.file_key = "grpc_listen", .flag = "grpc-listen", .env = "RATELIMITD_GRPC_LISTEN", .type = T::listen,
     .value_name = "HOST:PORT", .default_text = "off",
     .help = "address of the gRPC server (Envoy rate limit service); port 0 picks a free port",
     .field = both<&Settings::grpc_listen, &FileSettings::grpc_listen>()},
    {.file_key = "grpc_x_ratelimit_headers", .flag = "grpc-x-ratelimit-headers",
     .env = "RATELIMITD_GRPC_X_RATELIMIT_HEADERS", .type = T::on_off, .default_text = "off",
     .help = "gRPC answers also ask Envoy to add X-RateLimit-Limit/-Remaining/-Reset and Retry-After",
     .field = both<&Settings::grpc_x_ratelimit_headers, &FileSettings::grpc_x_ratelimit_headers>()},
    // envoyproxy/ratelimit adds none unless LIMIT_RESPONSE_HEADERS_ENABLED, then its own three.
    {.file_key = "grpc_response_headers", .flag = "grpc-response-headers", .env = "RATELIMITD_GRPC_RESPONSE_HEADERS",
     .type = T::choice, .choices = grpc_header_sets, .default_text = "ietf",
     .help = "rate-limit headers gRPC answers ask Envoy to add: ietf (RateLimit, RateLimit-Policy), none, or erl "
             "(envoyproxy/ratelimit's limit, remaining and reset headers)",
     .field = both<&Settings::grpc_response_headers, &FileSettings::grpc_response_headers>()},
    {.file_key = "grpc_limit_header", .flag = "grpc-limit-header", .env = "RATELIMITD_GRPC_LIMIT_HEADER",
     .type = T::path, .value_name = "NAME", .default_text = "RateLimit-Limit",
     .help = "grpc_response_headers erl: the header carrying the limit (its LIMIT_LIMIT_HEADER)",
     .field = both<&Settings::grpc_limit_header, &FileSettings::grpc_limit_header>()},
    {.file_key = "grpc_remaining_header", .flag = "grpc-remaining-header", .env = "RATELIMITD_GRPC_REMAINING_HEADER",
     .type = T::path, .value_name = "NAME", .default_text = "RateLimit-Remaining",
     .help = "grpc_response_headers erl: the header carrying what is left (its LIMIT_REMAINING_HEADER)",
     .field = both<&Settings::grpc_remaining_header, &FileSettings::grpc_remaining_header>()},
    {.file_key = "grpc_reset_header", .flag = "grpc-reset-header", .env = "RATELIMITD_GRPC_RESET_HEADER",
     .type = T::path, .value_name = "NAME", .default_text = "RateLimit-Reset",
     .help = "grpc_response_headers erl: the header carrying the seconds until the window ends (its LIMIT_RESET_HEADER)",
     .field = both<&Settings::grpc_reset_header, &FileSettings::grpc_reset_header>()},
    // Each gRPC connection costs a descriptor, taken from the same open-file limit as HTTP's
    // (docs/envoy.md, "Connections"): the cap keeps idle connections from starving HTTP.
    {.file_key = "grpc_max_connections", .flag = "grpc-max-connections", .env = "RATELIMITD_GRPC_MAX_CONNECTIONS",
     .type = T::count, .lo = 1, .hi = 1'000'000, .value_name = "N", .default_text = "1000",
     .help = "gRPC connections open at once; one more is closed at once",
     .field = both<&Settings::grpc_max_connections, &FileSettings::grpc_max_connections>()},
    {.file_key = "grpc_handshake_timeout", .flag = "grpc-handshake-timeout", .env = "RATELIMITD_GRPC_HANDSHAKE_TIMEOUT",
     .type = T::duration, .lo = 100, .hi = 120'000, .value_name = "DURATION", .default_text = "10s",
     .help = "for a new gRPC connection to finish TLS (grpc_tls) and send the HTTP/2 preface; then it is closed",
     .field = both<&Settings::grpc_handshake_timeout, &FileSettings::grpc_handshake_timeout>()},
    // Envoy reopens a closed connection on its next call: a short idle timeout costs a handshake.
    {.file_key = "grpc_idle_timeout", .flag = "grpc-idle-timeout", .env = "RATELIMITD_GRPC_IDLE_TIMEOUT",
     .type = T::duration, .lo = 1'000, .hi = 86'400'000, .value_name = "DURATION", .default_text = "5m",
     .help = "a gRPC connection without a call for this long gets GOAWAY and is closed",
     .field = both<&Settings::grpc_idle_timeout, &FileSettings::grpc_idle_timeout>()},
    {.file_key = "grpc_max_connection_age", .flag = "grpc-max-connection-age",
     .env = "RATELIMITD_GRPC_MAX_CONNECTION_AGE", .type = T::duration, .lo = 1'000, .hi = 604'800'000,
     .value_name = "DURATION", .default_text = "1h",
     .help = "a gRPC connection this old gets GOAWAY (Envoy reconnects), closed 10s later",
     .field = both<&Settings::grpc_max_connection_age, &FileSettings::grpc_max_connection_age>()},
    // TLS on the gRPC listener (docs/envoy.md, "TLS and client certificates"); each row is one
    // of envoyproxy/ratelimit's GRPC_SERVER_USE_TLS, _TLS_CERT, _TLS_KEY, GRPC_CLIENT_TLS_CACERT
    // and _SAN. The key is a path, not a secret: a flag is fine, its content is never logged.
    {.file_key = "grpc_tls", .flag = "grpc-tls", .env = "RATELIMITD_GRPC_TLS", .type = T::on_off,
     .default_text = "off", .help = "the gRPC listener speaks TLS only (needs grpc_tls_cert and grpc_tls_key)",
     .field = both<&Settings::grpc_tls, &FileSettings::grpc_tls>()},
    {.file_key = "grpc_tls_cert", .flag = "grpc-tls-cert", .env = "RATELIMITD_GRPC_TLS_CERT", .type = T::path,
     .value_name = "FILE", .default_text = "none", .help = "grpc_tls: the server's certificate chain (PEM)",
     .field = both<&Settings::grpc_tls_cert, &FileSettings::grpc_tls_cert>()},
    {.file_key = "grpc_tls_key", .flag = "grpc-tls-key", .env = "RATELIMITD_GRPC_TLS_KEY", .type = T::path,
     .value_name = "FILE", .default_text = "none", .help = "grpc_tls: the server certificate's private key (PEM)",
     .field = both<&Settings::grpc_tls_key, &FileSettings::grpc_tls_key>()},
    {.file_key = "grpc_tls_client_ca", .flag = "grpc-tls-client-ca", .env = "RATELIMITD_GRPC_TLS_CLIENT_CA",
     .type = T::path, .value_name = "FILE", .default_text = "none: no client certificate asked",
     .help = "grpc_tls: clients must show a certificate this CA bundle (PEM) signed",
     .field = both<&Settings::grpc_tls_client_ca, &FileSettings::grpc_tls_client_ca>()},
    {.file_key = "grpc_tls_client_san", .flag = "grpc-tls-client-san", .env = "RATELIMITD_GRPC_TLS_CLIENT_SAN",
     .type = T::path, .value_name = "NAME", .default_text = "none: any certificate the CA signed",
     .help = "grpc_tls_client_ca: the client certificate must carry this DNS name, IP or URI (SAN)",
     .field = both<&Settings::grpc_tls_client_san, &FileSettings::grpc_tls_client_san>()},
    // Read again this often (gRPC's file watcher): a renewed certificate needs no restart.
    {.file_key = "grpc_tls_reload_interval", .flag = "grpc-tls-reload-interval",
     .env = "RATELIMITD_GRPC_TLS_RELOAD_INTERVAL", .type = T::duration, .lo = 1'000, .hi = 3'600'000,
     .value_name = "DURATION", .default_text = "10s",
     .help = "grpc_tls: how often the certificate, key and client CA files are read again",
     .field = both<&Settings::grpc_tls_reload_interval, &FileSettings::grpc_tls_reload_interval>()},
    // The xDS config source (docs/envoy.md, "Rules from an xDS control plane"): each row is one of
    // envoyproxy/ratelimit's CONFIG_GRPC_XDS_* / XDS_CLIENT_* variables, with its default.
    {.file_key = "xds_server", .flag = "xds-server", .env = "RATELIMITD_XDS_SERVER", .type = T::listen,
     .value_name = "HOST:PORT", .default_text = "off: the domains come from the config file",
     .help = "the xDS control plane (ADS) serving the Envoy domains as RateLimitConfig resources",
     .field = both<&Settings::xds_server, &FileSettings::xds_server>()},
    {.file_key = "xds_node_id", .flag = "xds-node-id", .env = "RATELIMITD_XDS_NODE_ID", .type = T::path,
     .value_name = "ID", .default_text = "default", .help = "xds_server: the node id the control plane serves",
     .field = both<&Settings::xds_node_id, &FileSettings::xds_node_id>()},
    {.file_key = "xds_node_metadata", .flag = "xds-node-metadata", .env = "RATELIMITD_XDS_NODE_METADATA",
     .type = T::key_values, .value_name = "K=V,...", .default_text = "none",
     .help = "xds_server: the node's metadata, string values",
     .field = both<&Settings::xds_node_metadata, &FileSettings::xds_node_metadata>()},
    {.file_key = "xds_tls", .flag = "xds-tls", .env = "RATELIMITD_XDS_TLS", .type = T::on_off, .default_text = "off",
     .help = "xds_server: speak TLS to the control plane",
     .field = both<&Settings::xds_tls, &FileSettings::xds_tls>()},
    {.file_key = "xds_tls_ca", .flag = "xds-tls-ca", .env = "RATELIMITD_XDS_TLS_CA", .type = T::path,
     .value_name = "FILE", .default_text = "the system's CA store",
     .help = "xds_tls: the CA bundle (PEM) that signs the control plane's certificate",
     .field = both<&Settings::xds_tls_ca, &FileSettings::xds_tls_ca>()},
    {.file_key = "xds_tls_cert", .flag = "xds-tls-cert", .env = "RATELIMITD_XDS_TLS_CERT", .type = T::path,
     .value_name = "FILE", .default_text = "none", .help = "xds_tls: client certificate (PEM), with the key",
     .field = both<&Settings::xds_tls_cert, &FileSettings::xds_tls_cert>()},
    {.file_key = "xds_tls_key", .flag = "xds-tls-key", .env = "RATELIMITD_XDS_TLS_KEY", .type = T::path,
     .value_name = "FILE", .default_text = "none", .help = "xds_tls: the client certificate's private key (PEM)",
     .field = both<&Settings::xds_tls_key, &FileSettings::xds_tls_key>()},
    {.file_key = "xds_tls_server_san", .flag = "xds-tls-server-san", .env = "RATELIMITD_XDS_TLS_SERVER_SAN",
     .type = T::path, .value_name = "NAME", .default_text = "xds_server's host",
     .help = "xds_tls: the name verified in the control plane's certificate",
     .field = both<&Settings::xds_tls_server_san, &FileSettings::xds_tls_server_san>()},
    {.file_key = "xds_retry_interval", .flag = "xds-retry-interval", .env = "RATELIMITD_XDS_RETRY_INTERVAL",
     .type = T::duration, .lo = 100, .hi = 600'000, .value_name = "DURATION", .default_text = "3s",
     .help = "xds_server: how long one connection attempt may take before it counts as failed",
     .field = both<&Settings::xds_retry_interval, &FileSettings::xds_retry_interval>()},
    {.file_key = "xds_backoff_initial", .flag = "xds-backoff-initial", .env = "RATELIMITD_XDS_BACKOFF_INITIAL",
     .type = T::duration, .lo = 10, .hi = 3'600'000, .value_name = "DURATION", .default_text = "10s",
     .help = "xds_server: least wait before a new stream after one failed",
     .field = both<&Settings::xds_backoff_initial, &FileSettings::xds_backoff_initial>()},
    {.file_key = "xds_backoff_max", .flag = "xds-backoff-max", .env = "RATELIMITD_XDS_BACKOFF_MAX",
     .type = T::duration, .lo = 10, .hi = 86'400'000, .value_name = "DURATION", .default_text = "60s",
     .help = "xds_server: most wait before a new stream",
     .field = both<&Settings::xds_backoff_max, &FileSettings::xds_backoff_max>()},
    {.file_key = "xds_backoff_random_factor", .flag = "xds-backoff-random-factor",
     .env = "RATELIMITD_XDS_BACKOFF_RANDOM_FACTOR", .type = T::number, .lo = 0, .hi = 100, .value_name = "X",
     .default_text = "0.5",
     .help = "xds_server: the wait's growth per failed attempt (<= 1: always the least; 0: 2)",
     .field = both<&Settings::xds_backoff_random_factor, &FileSettings::xds_backoff_random_factor>()},
    {.file_key = "xds_backoff_jitter", .flag = "xds-backoff-jitter", .env = "RATELIMITD_XDS_BACKOFF_JITTER",
     .type = T::on_off, .default_text = "on", .help = "xds_server: draw each wait between the least and its grown value",
     .field = both<&Settings::xds_backoff_jitter, &FileSettings::xds_backoff_jitter>()},
    // gRPC's own default receive limit; a config past 64 MiB is a runaway control plane.
    {.file_key = "xds_max_message_bytes", .flag = "xds-max-message-bytes", .env = "RATELIMITD_XDS_MAX_MESSAGE_BYTES",
     .type = T::count, .lo = 1024, .hi = 64 * 1024 * 1024, .value_name = "N", .default_text = "4194304",
     .help = "xds_server: largest config message taken; a larger one ends the stream",
     .field = both<&Settings::xds_max_message_bytes, &FileSettings::xds_max_message_bytes>()},
    {.file_key = "xds_headers", .flag = "xds-headers", .env = "RATELIMITD_XDS_HEADERS", .type = T::headers,
     .value_name = "NAME:VALUE,...", .default_text = "none",
     .help = "xds_server: extra gRPC metadata on the stream (authorization...)",
     .field = both<&Settings::xds_headers, &FileSettings::xds_headers>()},
    {.file_key = "xds_force_start", .flag = "xds-force-start", .env = "RATELIMITD_XDS_FORCE_START",
     .type = T::on_off, .default_text = "off",
     .help = "xds_server: /readyz answers ready before the first config arrives",
     .field = both<&Settings::xds_force_start, &FileSettings::xds_force_start>()},
    // envoyproxy/ratelimit's keys and accounting for Envoy's descriptors, so its pods and
    // ratelimitd's count one budget during a rolling swap (docs/envoy.md); ERL mode maps
    // CACHE_KEY_PREFIX and EXPIRATION_JITTER_MAX_SECONDS onto the other two.
    {.file_key = "envoy_key_layout", .flag = "envoy-key-layout", .env = "RATELIMITD_ENVOY_KEY_LAYOUT",
     .type = T::choice, .choices = envoy_key_layouts, .default_text = "ratelimitd",
     .help = "Redis keys and accounting of Envoy's descriptors: ratelimitd's or envoyproxy-ratelimit's",
     .field = both<&Settings::envoy_key_layout, &FileSettings::envoy_key_layout>()},
    {.file_key = "envoy_key_prefix", .flag = "envoy-key-prefix", .env = "RATELIMITD_ENVOY_KEY_PREFIX",
     .type = T::path, .value_name = "TEXT", .default_text = "none",
     .help = "envoyproxy-ratelimit layout: the text before every key (its CACHE_KEY_PREFIX)",
     .field = both<&Settings::envoy_key_prefix, &FileSettings::envoy_key_prefix>()},
    // A day of jitter is already far past any unit but a month's.
    {.file_key = "envoy_expiration_jitter", .flag = "envoy-expiration-jitter",
     .env = "RATELIMITD_ENVOY_EXPIRATION_JITTER", .type = T::duration, .lo = 1'000, .hi = 86'400'000,
     .zero_allowed = true,
     .value_name = "DURATION", .default_text = "0s",
     .help = "envoyproxy-ratelimit layout: most random seconds added to a key's TTL (its EXPIRATION_JITTER_MAX_SECONDS)",
     .field = both<&Settings::envoy_expiration_jitter, &FileSettings::envoy_expiration_jitter>()},
    // envoyproxy/ratelimit's SHADOW_MODE: its limits count as ever, but no call is refused.
    {.file_key = "envoy_shadow_mode", .flag = "envoy-shadow-mode", .env = "RATELIMITD_ENVOY_SHADOW_MODE",
     .type = T::on_off, .default_text = "off",
     .help = "every ShouldRateLimit call answers OK overall; descriptors still say OVER_LIMIT (its SHADOW_MODE)",
     .field = both<&Settings::envoy_shadow_mode, &FileSettings::envoy_shadow_mode>()},
    // envoyproxy/ratelimit answers a store error with a gRPC error, which Envoy's
    // failure_mode_deny (Envoy Gateway's failClosed) decides; swapping it for ratelimitd must
    // not turn a fail-closed gateway fail-open. Native registry domains keep on_store_error.
    {.file_key = "envoy_store_error", .flag = "envoy-store-error", .env = "RATELIMITD_ENVOY_STORE_ERROR",
     .type = T::choice, .choices = envoy_store_errors, .default_text = "unavailable",
     .help = "ERL mode and xDS: a store failure answers ShouldRateLimit UNAVAILABLE (Envoy decides), OK or OVER_LIMIT",
     .field = both<&Settings::envoy_store_error, &FileSettings::envoy_store_error>()},
    // envoyproxy/ratelimit's QUOTA_MODE: quota_mode on every descriptor.
    {.file_key = "envoy_quota_mode", .flag = "envoy-quota-mode", .env = "RATELIMITD_ENVOY_QUOTA_MODE",
     .type = T::on_off, .default_text = "off",
     .help = "every limited ShouldRateLimit descriptor in quota mode: a call is over only when all of them are "
             "(its QUOTA_MODE)",
     .field = both<&Settings::envoy_quota_mode, &FileSettings::envoy_quota_mode>()},
    // Traces (docs/tracing.md). The OpenTelemetry SDKs' variables are read too (env_alias), so a
    // deployment configured for them, Envoy Gateway's among them, needs nothing else.
    {.file_key = "trace_endpoint", .flag = "trace-endpoint", .env = "RATELIMITD_TRACE_ENDPOINT",
     .env_alias = "OTEL_EXPORTER_OTLP_ENDPOINT", .type = T::path, .value_name = "URL",
     .default_text = "none: tracing is off", .help = "the OTLP collector spans are exported to",
     .field = both<&Settings::trace_endpoint, &FileSettings::trace_endpoint>()},
    {.file_key = "trace_protocol", .flag = "trace-protocol", .env = "RATELIMITD_TRACE_PROTOCOL",
     .env_alias = "OTEL_EXPORTER_OTLP_PROTOCOL", .type = T::choice, .choices = trace_protocols,
     .default_text = "http/protobuf", .help = "trace_endpoint: OTLP over HTTP (protobuf) or gRPC",
     .field = both<&Settings::trace_protocol, &FileSettings::trace_protocol>()},
    // Collectors take API keys as headers: a secret, so no flag and no file key.
    {.env = "RATELIMITD_TRACE_HEADERS", .env_alias = "OTEL_EXPORTER_OTLP_HEADERS", .type = T::secret, .lo = 1,
     .default_text = "none", .help = "trace_endpoint: headers of each export, k=v,k2=v2 (values percent-encoded)",
     .field = text_only<&Settings::trace_headers>()},
    {.file_key = "trace_insecure", .flag = "trace-insecure", .env = "RATELIMITD_TRACE_INSECURE",
     .env_alias = "OTEL_EXPORTER_OTLP_INSECURE", .type = T::on_off, .default_text = "off",
     .help = "trace_endpoint: plain text to a gRPC host:port (an http:// URL is plain anyway)",
     .field = both<&Settings::trace_insecure, &FileSettings::trace_insecure>()},
    {.file_key = "trace_sampler", .flag = "trace-sampler", .env = "RATELIMITD_TRACE_SAMPLER",
     .env_alias = "OTEL_TRACES_SAMPLER", .type = T::choice, .choices = trace_samplers,
     .default_text = "parentbased_traceidratio", .help = "which checks are traced; parentbased_*: as the caller's trace",
     .field = both<&Settings::trace_sampler, &FileSettings::trace_sampler>()},
    {.file_key = "trace_sampler_arg", .flag = "trace-sampler-arg", .env = "RATELIMITD_TRACE_SAMPLER_ARG",
     .env_alias = "OTEL_TRACES_SAMPLER_ARG", .type = T::number, .lo = 0, .hi = 1, .value_name = "RATIO",
     .default_text = "1.0", .help = "the traceidratio samplers' share of new traces, 0 to 1",
     .field = both<&Settings::trace_sampler_arg, &FileSettings::trace_sampler_arg>()},
    {.file_key = "trace_service_name", .flag = "trace-service-name", .env = "RATELIMITD_TRACE_SERVICE_NAME",
     .env_alias = "OTEL_SERVICE_NAME", .type = T::path, .value_name = "NAME", .default_text = "ratelimitd",
     .help = "the spans' service.name",
     .field = both<&Settings::trace_service_name, &FileSettings::trace_service_name>()},
    {.file_key = "trace_service_namespace", .flag = "trace-service-namespace",
     .env = "RATELIMITD_TRACE_SERVICE_NAMESPACE", .type = T::path, .value_name = "NAME", .default_text = "none",
     .help = "the spans' service.namespace",
     .field = both<&Settings::trace_service_namespace, &FileSettings::trace_service_namespace>()},
    {.file_key = "trace_service_instance_id", .flag = "trace-service-instance-id",
     .env = "RATELIMITD_TRACE_SERVICE_INSTANCE_ID", .type = T::path, .value_name = "ID", .default_text = "none",
     .help = "the spans' service.instance.id",
     .field = both<&Settings::trace_service_instance_id, &FileSettings::trace_service_instance_id>()},
};

}  // namespace

std::span<const SettingRow> setting_table() noexcept { return rows; }

const SettingRow* find_setting_by_flag(std::string_view flag) noexcept {
    if (flag.empty()) return nullptr;
    for (const auto& row : rows) {
        if (row.flag == flag) return &row;
    }
    return nullptr;
}

}  // namespace ratelimitd::config
