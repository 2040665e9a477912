// The process settings as the service uses them, and as one config file gives them. Which
// flag, variable and file key feed each field, its bounds and its default text: the table
// (setting_table.hpp). Not reloadable: a SIGHUP reads the file but only the Registry is swapped.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ratelimitd::config {

/// Every process setting after precedence (flag > RATELIMITD_* environment > file > default).
struct Settings {
    std::string config_path;
    std::string listen_host = "127.0.0.1";
    unsigned short listen_port = 8080;
    std::optional<std::string> redis_url;       ///< none anywhere: the embedded store
    /// envoyproxy/ratelimit's REDIS_PERSECOND: a second Redis holding the counters of its
    /// per-second limits (store/unit_routing_backend.hpp); none: one store for every unit.
    std::optional<std::string> redis_per_second_url;
    int threads = 1;                            ///< app sets the CPUs this process may use
    std::string log_level = "info";
    std::string log_format = "text";
    std::chrono::milliseconds store_timeout{50};
    std::optional<std::string> admin_token;     ///< RATELIMITD_ADMIN_TOKEN or admin_token
    std::optional<std::string> hash_secret;     ///< RATELIMITD_HASH_SECRET (wins over hash_secret)
    std::string access_log = "off";             ///< off|denied|all
    double access_log_sample = 1.0;
    std::optional<std::string> audit_log;       ///< "stderr" or a file path; none: no audit log written
    bool denial_cache = true;                   ///< --denial-cache on|off (Redis store only)
    bool coalescing = true;                     ///< --coalescing on|off (Redis store only)
    bool watch_config = true;                   ///< --watch-config on|off: reload when the file changes
    std::size_t max_connections = 10'000;       ///< open at once; beyond it: 503 and close
    std::size_t max_requests_per_connection = 10'000;  ///< the last one's answer closes
    std::chrono::milliseconds request_timeout{10'000};  ///< to read a whole request
    std::size_t max_held_requests = 1'000;      ///< delayed /v1/auth answers held at once; beyond: denied
    std::size_t memory_max_keys = 1'000'000;    ///< embedded store; 0: no cap
    std::size_t top_k = 20;                     ///< heavy hitters kept per sketch; 0: off
    std::chrono::milliseconds top_window{300'000};  ///< heavy hitters' window (5 slices)
    std::size_t notify_queue = 10'000;          ///< quota webhook events waiting; beyond: dropped
    std::string redis_tls_ca;                   ///< rediss://: CA bundle; empty: the system's
    std::string redis_tls_cert;                 ///< rediss://: client certificate file
    std::string redis_tls_key;                  ///< rediss://: its private key file
    std::string redis_tls_server_name;          ///< rediss://: empty: the URL's host
    bool redis_tls_insecure_skip_verify = false;
    /// How token buckets are written in Redis: "string" or "hash" (the layout of earlier
    /// versions, for a fleet mid-upgrade; store::StateLayout).
    std::string redis_state_layout = "string";
    std::optional<std::string> grpc_listen;     ///< "HOST:PORT" of the gRPC server; none: off
    bool grpc_x_ratelimit_headers = false;      ///< gRPC answers also carry X-RateLimit-*
    std::size_t grpc_max_connections = 1'000;   ///< gRPC connections open at once; beyond: closed
    std::chrono::milliseconds grpc_handshake_timeout{10'000};  ///< to send the HTTP/2 preface
    std::chrono::milliseconds grpc_idle_timeout{300'000};      ///< no call for this long: GOAWAY
    std::chrono::milliseconds grpc_max_connection_age{3'600'000};  ///< this old: GOAWAY
    bool grpc_tls = false;                      ///< the gRPC listener speaks TLS (needs cert and key)
    std::string grpc_tls_cert;                  ///< its certificate chain (PEM file)
    std::string grpc_tls_key;                   ///< its private key (PEM file)
    std::string grpc_tls_client_ca;             ///< set: a client certificate it signed is required
    std::string grpc_tls_client_san;            ///< set: the client certificate must name it
    std::chrono::milliseconds grpc_tls_reload_interval{10'000};  ///< how often the files are read again
    // The xDS config source (docs/envoy.md, "Rules from an xDS control plane").
    std::optional<std::string> xds_server;      ///< "HOST:PORT" of the control plane; set: domains come from it
    std::string xds_node_id = "default";        ///< Node.id the control plane keys its snapshot by
    std::string xds_node_metadata;              ///< "k=v,k2=v2": Node.metadata, string values
    bool xds_tls = false;                       ///< TLS to the control plane
    std::string xds_tls_ca;                     ///< CA bundle that signs its certificate; empty: the system's
    std::string xds_tls_cert;                   ///< client certificate (PEM) shown to it
    std::string xds_tls_key;                    ///< the client certificate's private key
    std::string xds_tls_server_san;             ///< name verified in its certificate; empty: the host
    std::chrono::milliseconds xds_retry_interval{3'000};   ///< one connection attempt's deadline
    std::chrono::milliseconds xds_backoff_initial{10'000}; ///< least wait before a new stream
    std::chrono::milliseconds xds_backoff_max{60'000};     ///< most wait before a new stream
    double xds_backoff_random_factor = 0.5;     ///< the wait's growth per attempt (envoyproxy/ratelimit's)
    bool xds_backoff_jitter = true;             ///< each wait drawn between the least and its grown value
    std::size_t xds_max_message_bytes = 4 * 1024 * 1024;  ///< largest DiscoveryResponse taken
    std::string xds_headers;                    ///< "name:value,...": gRPC metadata on the stream
    bool xds_force_start = false;               ///< ready (/readyz) before the first config
    /// Whose Redis keys and accounting Envoy's descriptors use: "ratelimitd" or
    /// "envoyproxy-ratelimit" (its keys, INCRBY + EXPIRE, its OVER_LIMIT; docs/envoy.md).
    std::string envoy_key_layout = "ratelimitd";
    std::string envoy_key_prefix;               ///< envoyproxy-ratelimit: its CACHE_KEY_PREFIX
    std::chrono::milliseconds envoy_expiration_jitter{0};  ///< its EXPIRATION_JITTER_MAX_SECONDS
    bool envoy_shadow_mode = false;             ///< every ShouldRateLimit answers OK overall (its SHADOW_MODE)
    /// ERL mode and xDS: a store failure answers unavailable (gRPC UNAVAILABLE), allow or deny.
    std::string envoy_store_error = "unavailable";
    bool envoy_quota_mode = false;              ///< every limited descriptor in quota mode (its QUOTA_MODE)
    /// Which rate-limit headers gRPC answers ask Envoy to add: "ietf" (RateLimit-Policy and
    /// RateLimit, plus X-RateLimit-* with grpc_x_ratelimit_headers), "none", or "erl"
    /// (envoyproxy/ratelimit's three, named below).
    std::string grpc_response_headers = "ietf";
    std::string grpc_limit_header = "RateLimit-Limit";          ///< "erl": its LIMIT_LIMIT_HEADER
    std::string grpc_remaining_header = "RateLimit-Remaining";  ///< "erl": its LIMIT_REMAINING_HEADER
    std::string grpc_reset_header = "RateLimit-Reset";          ///< "erl": its LIMIT_RESET_HEADER
    // Traces over OTLP (docs/tracing.md).
    std::optional<std::string> trace_endpoint;  ///< the collector's URL; none: tracing is off
    std::string trace_protocol = "http/protobuf";  ///< http/protobuf|grpc
    std::optional<std::string> trace_headers;   ///< "k=v,k2=v2" sent with each export (secret: may hold a key)
    bool trace_insecure = false;                ///< grpc: plain text to a host:port endpoint
    std::string trace_sampler = "parentbased_traceidratio";  ///< OTEL_TRACES_SAMPLER's names
    double trace_sampler_arg = 1.0;             ///< the ratio of the traceidratio samplers
    std::string trace_service_name = "ratelimitd";  ///< service.name
    std::string trace_service_namespace;        ///< service.namespace; empty: not sent
    std::string trace_service_instance_id;      ///< service.instance.id; empty: not sent

    bool operator==(const Settings&) const = default;
};

/// The process settings one config file holds, validated; absent: the file does not say.
/// Each field is the twin of a Settings field, filled through the table's file key.
struct FileSettings {
    std::optional<std::string> listen;         ///< "HOST:PORT"
    std::optional<std::string> redis;          ///< redis://[:password@]host:port[/db]
    std::optional<std::string> redis_per_second;  ///< the same forms, for per-second counters
    std::optional<int> threads;
    std::optional<std::string> log_level;      ///< trace|debug|info|warn|error
    std::optional<std::string> log_format;     ///< text|json
    std::optional<std::chrono::milliseconds> store_timeout;
    std::optional<std::string> admin_token;    ///< bearer token for the admin endpoints
    std::optional<std::string> access_log;     ///< off|denied|all
    std::optional<double> access_log_sample;   ///< 0..1
    std::optional<std::string> audit_log;      ///< stderr|PATH
    std::optional<std::int64_t> max_connections;
    std::optional<std::int64_t> max_requests_per_connection;
    std::optional<std::chrono::milliseconds> request_timeout;
    std::optional<std::int64_t> max_held_requests;
    std::optional<std::int64_t> memory_max_keys;  ///< 0: no cap
    std::optional<std::int64_t> top_k;            ///< 0: heavy hitters off
    std::optional<std::chrono::milliseconds> top_window;
    std::optional<std::int64_t> notify_queue;
    std::optional<std::string> redis_tls_ca;
    std::optional<std::string> redis_tls_cert;
    std::optional<std::string> redis_tls_key;
    std::optional<std::string> redis_tls_server_name;
    std::optional<bool> redis_tls_insecure_skip_verify;
    std::optional<std::string> redis_state_layout;  ///< string|hash
    std::optional<std::string> grpc_listen;    ///< "HOST:PORT"
    std::optional<bool> grpc_x_ratelimit_headers;
    std::optional<std::int64_t> grpc_max_connections;
    std::optional<std::chrono::milliseconds> grpc_handshake_timeout;
    std::optional<std::chrono::milliseconds> grpc_idle_timeout;
    std::optional<std::chrono::milliseconds> grpc_max_connection_age;
    std::optional<bool> grpc_tls;
    std::optional<std::string> grpc_tls_cert;
    std::optional<std::string> grpc_tls_key;
    std::optional<std::string> grpc_tls_client_ca;
    std::optional<std::string> grpc_tls_client_san;
    std::optional<std::chrono::milliseconds> grpc_tls_reload_interval;
    std::optional<std::string> xds_server;
    std::optional<std::string> xds_node_id;
    std::optional<std::string> xds_node_metadata;
    std::optional<bool> xds_tls;
    std::optional<std::string> xds_tls_ca;
    std::optional<std::string> xds_tls_cert;
    std::optional<std::string> xds_tls_key;
    std::optional<std::string> xds_tls_server_san;
    std::optional<std::chrono::milliseconds> xds_retry_interval;
    std::optional<std::chrono::milliseconds> xds_backoff_initial;
    std::optional<std::chrono::milliseconds> xds_backoff_max;
    std::optional<double> xds_backoff_random_factor;
    std::optional<bool> xds_backoff_jitter;
    std::optional<std::int64_t> xds_max_message_bytes;
    std::optional<std::string> xds_headers;
    std::optional<bool> xds_force_start;
    std::optional<std::string> envoy_key_layout;
    std::optional<std::string> envoy_key_prefix;
    std::optional<std::chrono::milliseconds> envoy_expiration_jitter;
    std::optional<bool> envoy_shadow_mode;
    std::optional<std::string> envoy_store_error;
    std::optional<bool> envoy_quota_mode;
    std::optional<std::string> grpc_response_headers;
    std::optional<std::string> grpc_limit_header;
    std::optional<std::string> grpc_remaining_header;
    std::optional<std::string> grpc_reset_header;
    std::optional<std::string> trace_endpoint;
    std::optional<std::string> trace_protocol;
    std::optional<bool> trace_insecure;
    std::optional<std::string> trace_sampler;
    std::optional<double> trace_sampler_arg;
    std::optional<std::string> trace_service_name;
    std::optional<std::string> trace_service_namespace;
    std::optional<std::string> trace_service_instance_id;

    bool operator==(const FileSettings&) const = default;
};

}  // namespace ratelimitd::config
