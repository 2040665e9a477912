// The rows of ERL mode (erl_variables.hpp): every variable of
// envoyproxy/ratelimit's settings.go, in its order, with envoyproxy/ratelimit's
// default and what ratelimitd does with it.
#include "ratelimitd/erl/erl_variables.hpp"

namespace ratelimitd::erl {
namespace {

using T = ErlType;
using U = ErlUse;

constexpr std::string_view persecond_as = "as its REDIS_ twin, for the per-second Redis (REDIS_PERSECOND=true)";
constexpr std::string_view memcache_only = "read only with BACKEND_TYPE=memcache, which is refused";
constexpr std::string_view no_pool =
    "no connection pool to size: each server thread keeps its own connection and coalesces the checks waiting together";

constexpr ErlVariable rows[] = {
    {"HOST", T::text, "0.0.0.0", U::mapped, "HTTP listener's host (`RATELIMITD_LISTEN`)", ""},
    {"PORT", T::integer, "8080", U::mapped,
     "HTTP listener's port: `/healthcheck`, `POST /json` and ratelimitd's own endpoints", "http"},
    {"DEBUG_HOST", T::text, "0.0.0.0", U::mapped, "debug listener's host", ""},
    {"DEBUG_PORT", T::integer, "6070", U::mapped, "debug listener's port: `/rlconfig`, `/metrics`", ""},
    {"GRPC_UDS", T::text, "", U::refused, "a gRPC listener on a unix socket is not supported: use GRPC_HOST/GRPC_PORT",
     "/tmp/ratelimit.sock"},
    {"GRPC_HOST", T::text, "0.0.0.0", U::mapped, "gRPC listener's host (`RATELIMITD_GRPC_LISTEN`)", ""},
    {"GRPC_PORT", T::integer, "8081", U::mapped, "gRPC listener's port (`RATELIMITD_GRPC_LISTEN`)", ""},
    {"GRPC_MAX_CONNECTION_AGE", T::duration, "24h", U::mapped, "`RATELIMITD_GRPC_MAX_CONNECTION_AGE` (1s to 7d)", ""},
    {"GRPC_MAX_CONNECTION_AGE_GRACE", T::duration, "1h", U::no_effect,
     "a connection past its age closes once its calls are done (each ends within the store deadline)", ""},
    {"GRPC_SERVER_USE_TLS", T::boolean, "false", U::mapped, "`RATELIMITD_GRPC_TLS`", ""},
    {"GRPC_SERVER_TLS_CERT", T::text, "", U::mapped, "`RATELIMITD_GRPC_TLS_CERT`", ""},
    {"GRPC_SERVER_TLS_KEY", T::text, "", U::mapped, "`RATELIMITD_GRPC_TLS_KEY`", ""},
    {"GRPC_CLIENT_TLS_CACERT", T::text, "", U::mapped, "`RATELIMITD_GRPC_TLS_CLIENT_CA` (client certificates required)",
     ""},
    {"GRPC_CLIENT_TLS_SAN", T::text, "", U::mapped, "`RATELIMITD_GRPC_TLS_CLIENT_SAN`", ""},
    {"LOG_LEVEL", T::text, "WARN", U::mapped,
     "`RATELIMITD_LOG_LEVEL`: trace, debug, info, warn (warning), error (fatal, panic), any case", "loud"},
    {"LOG_FORMAT", T::text, "text", U::mapped, "`RATELIMITD_LOG_FORMAT`: json (any case), else text", ""},
    {"CONFIG_TYPE", T::text, "FILE", U::mapped,
     "FILE: the runtime directory; GRPC_XDS_SOTW: domains from xDS (`RATELIMITD_XDS_SERVER`)", "CONSUL"},
    {"FORCE_START_WITHOUT_INITIAL_CONFIG", T::boolean, "false", U::no_effect,
     "the runtime directory is read before the listeners open; an xDS start does not wait for a first config", ""},
    {"CONFIG_GRPC_XDS_NODE_ID", T::text, "default", U::mapped, "`RATELIMITD_XDS_NODE_ID` (GRPC_XDS_SOTW)", ""},
    {"CONFIG_GRPC_XDS_NODE_METADATA", T::text, "", U::mapped, "`RATELIMITD_XDS_NODE_METADATA` (GRPC_XDS_SOTW)", ""},
    {"CONFIG_GRPC_XDS_SERVER_URL", T::text, "localhost:18000", U::mapped, "`RATELIMITD_XDS_SERVER` (GRPC_XDS_SOTW)",
     ""},
    {"CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL", T::duration, "3s", U::mapped,
     "`RATELIMITD_XDS_RETRY_INTERVAL` (GRPC_XDS_SOTW)", ""},
    {"CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS", T::map, "", U::mapped, "`RATELIMITD_XDS_HEADERS` (GRPC_XDS_SOTW)",
     ""},
    {"CONFIG_GRPC_XDS_SERVER_USE_TLS", T::boolean, "false", U::mapped, "`RATELIMITD_XDS_TLS` (GRPC_XDS_SOTW)", ""},
    {"CONFIG_GRPC_XDS_CLIENT_TLS_CERT", T::text, "", U::mapped, "`RATELIMITD_XDS_TLS_CERT` (GRPC_XDS_SOTW)", ""},
    {"CONFIG_GRPC_XDS_CLIENT_TLS_KEY", T::text, "", U::mapped, "`RATELIMITD_XDS_TLS_KEY` (GRPC_XDS_SOTW)", ""},
    {"CONFIG_GRPC_XDS_SERVER_TLS_CACERT", T::text, "", U::mapped, "`RATELIMITD_XDS_TLS_CA` (GRPC_XDS_SOTW)", ""},
    {"CONFIG_GRPC_XDS_SERVER_TLS_SAN", T::text, "", U::mapped, "`RATELIMITD_XDS_TLS_SERVER_SAN` (GRPC_XDS_SOTW)", ""},
    {"XDS_CLIENT_BACKOFF_INITIAL_INTERVAL", T::duration, "10s", U::mapped,
     "`RATELIMITD_XDS_BACKOFF_INITIAL` (GRPC_XDS_SOTW)", ""},
    {"XDS_CLIENT_BACKOFF_MAX_INTERVAL", T::duration, "60s", U::mapped, "`RATELIMITD_XDS_BACKOFF_MAX` (GRPC_XDS_SOTW)",
     ""},
    {"XDS_CLIENT_BACKOFF_RANDOM_FACTOR", T::number, "0.5", U::mapped,
     "`RATELIMITD_XDS_BACKOFF_RANDOM_FACTOR` (GRPC_XDS_SOTW)", ""},
    {"XDS_CLIENT_BACKOFF_JITTER", T::boolean, "true", U::mapped, "`RATELIMITD_XDS_BACKOFF_JITTER` (GRPC_XDS_SOTW)", ""},
    {"XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES", T::integer, "", U::mapped,
     "`RATELIMITD_XDS_MAX_MESSAGE_BYTES` (GRPC_XDS_SOTW)", ""},
    {"USE_DOG_STATSD", T::boolean, "false", U::no_effect,
     "warned at start when true: no DogStatsD sink here (USE_STATSD or USE_PROMETHEUS)", ""},
    {"USE_DOG_STATSD_MOGRIFIERS", T::list, "", U::no_effect, "no DogStatsD sink here", ""},
    {"USE_STATSD", T::boolean, "true", U::mapped,
     "statsd counter lines over UDP to STATSD_HOST:STATSD_PORT every STATS_FLUSH_INTERVAL (envoyproxy/ratelimit "
     "sends them over TCP); with USE_PROMETHEUS=true refused, as there",
     ""},
    {"STATSD_HOST", T::text, "localhost", U::mapped, "where the statsd lines go (USE_STATSD)", ""},
    {"STATSD_PORT", T::integer, "8125", U::mapped, "where the statsd lines go (USE_STATSD)", ""},
    {"EXTRA_TAGS", T::map, "", U::mapped, "k:v pairs appended to every statsd name as .__k=v (USE_STATSD)", ""},
    {"STATS_FLUSH_INTERVAL", T::duration, "10s", U::mapped,
     "how often statsd lines are sent (USE_STATSD); /metrics is read live", ""},
    {"DISABLE_STATS", T::boolean, "false", U::mapped, "true: envoyproxy/ratelimit's stats are not counted at all", ""},
    {"USE_PROMETHEUS", T::boolean, "false", U::mapped,
     "a listener at PROMETHEUS_ADDR serving /metrics, with envoyproxy/ratelimit's stats mapped "
     "(PROMETHEUS_MAPPER_YAML) beside ratelimitd's own",
     ""},
    {"PROMETHEUS_ADDR", T::text, ":9090", U::mapped, "that listener's HOST:PORT (empty host: 0.0.0.0)", ""},
    {"PROMETHEUS_PATH", T::text, "/metrics", U::refused, "only /metrics is served", "/stats"},
    {"PROMETHEUS_MAPPER_YAML", T::text, "", U::mapped,
     "a statsd_exporter mapping file (the subset in docs/envoy.md, \"Stats\"; the rest refused at start); empty: "
     "envoyproxy/ratelimit's default mapping",
     ""},
    {"PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS", T::boolean, "false", U::no_effect,
     "no response_time series is made (ratelimitd_grpc_request_duration_seconds has the call latency)", ""},
    {"RUNTIME_ROOT", T::text, "/srv/runtime_data/current", U::mapped, "the runtime directory's root", ""},
    {"RUNTIME_SUBDIRECTORY", T::text, "", U::mapped, "below RUNTIME_ROOT", ""},
    {"RUNTIME_APPDIRECTORY", T::text, "config", U::mapped, "below the subdirectory: the config files", ""},
    {"RUNTIME_IGNOREDOTFILES", T::boolean, "false", U::mapped, "skip files and directories whose name starts with .",
     ""},
    {"RUNTIME_WATCH_ROOT", T::boolean, "true", U::mapped,
     "true: reload when RUNTIME_ROOT (a symlink) is swapped; false: when a file under the config directory changes",
     ""},
    {"EXPIRATION_JITTER_MAX_SECONDS", T::integer, "300", U::mapped, "`RATELIMITD_ENVOY_EXPIRATION_JITTER`", ""},
    {"LOCAL_CACHE_SIZE_IN_BYTES", T::integer, "0", U::mapped,
     "`RATELIMITD_DENIAL_CACHE`: 0 off, else on (the size is not needed: one entry per denied key)", ""},
    {"NEAR_LIMIT_RATIO", T::number, "0.8", U::mapped,
     "hits past floor(limit * ratio) and within the limit count as near_limit (USE_STATSD, USE_PROMETHEUS)", ""},
    {"CACHE_KEY_PREFIX", T::text, "", U::mapped,
     "`RATELIMITD_ENVOY_KEY_PREFIX` (keys as envoyproxy/ratelimit writes them)", ""},
    {"BACKEND_TYPE", T::text, "redis", U::mapped, "redis only; memcache is refused", "memcache"},
    {"STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT", T::boolean, "false", U::mapped,
     "false: `envoy_denied_calls: charge`; true: `envoy_denied_calls: refuse`", ""},
    {"LIMIT_RESPONSE_HEADERS_ENABLED", T::boolean, "false", U::mapped,
     "`RATELIMITD_GRPC_RESPONSE_HEADERS`: false `none` (no header added), true `erl` (its three headers)", ""},
    {"LIMIT_LIMIT_HEADER", T::text, "RateLimit-Limit", U::mapped, "`RATELIMITD_GRPC_LIMIT_HEADER`", ""},
    {"LIMIT_REMAINING_HEADER", T::text, "RateLimit-Remaining", U::mapped, "`RATELIMITD_GRPC_REMAINING_HEADER`", ""},
    {"LIMIT_RESET_HEADER", T::text, "RateLimit-Reset", U::mapped, "`RATELIMITD_GRPC_RESET_HEADER`", ""},
    {"HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED", T::boolean, "false", U::mapped,
     "true: `/healthcheck` answers 500 and gRPC health NOT_SERVING until a config with a domain is loaded", ""},
    {"REDIS_SOCKET_TYPE", T::text, "unix", U::mapped, "tcp; unix (the default) is refused: set tcp", "unix"},
    {"REDIS_TYPE", T::text, "SINGLE", U::mapped,
     "single: `redis://`; sentinel: `redis-sentinel://` (REDIS_URL: master,host:port,...); cluster: `redis-cluster://` "
     "(any case)",
     "ring"},
    {"REDIS_URL", T::text, "/var/run/nutcracker/ratelimit.sock", U::mapped,
     "host:port, or a comma list (sentinel, cluster): `RATELIMITD_REDIS_URL`", "no-port"},
    {"REDIS_POOL_SIZE", T::integer, "10", U::no_effect, no_pool, ""},
    {"REDIS_AUTH", T::text, "", U::mapped, "the URL's password, or user:password", ""},
    {"REDIS_TLS", T::boolean, "false", U::mapped, "`rediss://` (`rediss-sentinel://`, `rediss-cluster://`)", ""},
    {"REDIS_TLS_CLIENT_CERT", T::text, "", U::mapped, "`RATELIMITD_REDIS_TLS_CERT`", ""},
    {"REDIS_TLS_CLIENT_KEY", T::text, "", U::mapped, "`RATELIMITD_REDIS_TLS_KEY`", ""},
    {"REDIS_TLS_CACERT", T::text, "", U::mapped, "`RATELIMITD_REDIS_TLS_CA`", ""},
    {"REDIS_TLS_SKIP_HOSTNAME_VERIFICATION", T::boolean, "false", U::mapped,
     "`RATELIMITD_REDIS_TLS_INSECURE_SKIP_VERIFY`: skips the whole certificate check, not only the name (warned)", ""},
    {"REDIS_PIPELINE_WINDOW", T::duration, "0", U::no_effect, "checks waiting together are sent as one script call",
     ""},
    {"REDIS_PIPELINE_LIMIT", T::integer, "0", U::no_effect, "unused in envoyproxy/ratelimit too", ""},
    {"REDIS_CLUSTER_PIPELINE_PARALLELISM", T::integer, "1", U::no_effect,
     "cluster calls go to each primary in parallel", ""},
    {"REDIS_PERSECOND", T::boolean, "false", U::mapped,
     "true: the counters of SECOND limits in a second Redis (`RATELIMITD_REDIS_PER_SECOND_URL`, from the "
     "REDIS_PERSECOND_ variables), the others in REDIS_URL's",
     ""},
    {"REDIS_PERSECOND_SOCKET_TYPE", T::text, "unix", U::mapped, "tcp; unix (the default) is refused (REDIS_PERSECOND=true)", ""},
    {"REDIS_PERSECOND_TYPE", T::text, "SINGLE", U::mapped, persecond_as, ""},
    {"REDIS_PERSECOND_URL", T::text, "/var/run/nutcracker/ratelimitpersecond.sock", U::mapped, persecond_as, ""},
    {"REDIS_PERSECOND_POOL_SIZE", T::integer, "10", U::no_effect, no_pool, ""},
    {"REDIS_PERSECOND_AUTH", T::text, "", U::mapped, persecond_as, ""},
    {"REDIS_PERSECOND_TLS", T::boolean, "false", U::mapped,
     "`rediss://` for the per-second Redis, with REDIS_TLS_CACERT, REDIS_TLS_CLIENT_CERT and REDIS_TLS_CLIENT_KEY "
     "(one TLS config for both, as there)",
     ""},
    {"REDIS_SENTINEL_AUTH", T::text, "", U::mapped, "the URL's `sentinel_password` (REDIS_TYPE=sentinel)", ""},
    {"REDIS_PERSECOND_SENTINEL_AUTH", T::text, "", U::mapped, persecond_as, ""},
    {"REDIS_PERSECOND_PIPELINE_WINDOW", T::duration, "0", U::no_effect, "as REDIS_PIPELINE_WINDOW", ""},
    {"REDIS_PERSECOND_PIPELINE_LIMIT", T::integer, "0", U::no_effect, "unused in envoyproxy/ratelimit too", ""},
    {"REDIS_PERSECOND_CLUSTER_PIPELINE_PARALLELISM", T::integer, "1", U::no_effect,
     "as REDIS_CLUSTER_PIPELINE_PARALLELISM", ""},
    {"REDIS_HEALTH_CHECK_ACTIVE_CONNECTION", T::boolean, "false", U::mapped,
     "true: `/healthcheck` PINGs the store and answers 500 when it does not answer", ""},
    {"REDIS_TIMEOUT", T::duration, "10s", U::no_effect,
     "a check waits for the store at most `RATELIMITD_STORE_TIMEOUT` (50ms), then answers UNAVAILABLE "
     "(`REDIS_ERROR_ANSWER`); reconnection is automatic",
     ""},
    {"REDIS_PERSECOND_TIMEOUT", T::duration, "10s", U::no_effect, "as REDIS_TIMEOUT: `RATELIMITD_STORE_TIMEOUT` for both", ""},
    {"REDIS_POOL_ON_EMPTY_BEHAVIOR", T::text, "WAIT", U::mapped,
     "WAIT only, as envoyproxy/ratelimit: CREATE and ERROR are refused", "CREATE"},
    {"REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR", T::text, "WAIT", U::mapped,
     "WAIT only, as REDIS_POOL_ON_EMPTY_BEHAVIOR (REDIS_PERSECOND=true)", ""},
    {"REDIS_STARTUP_INITIAL_INTERVAL", T::duration, "1s", U::no_effect,
     "ratelimitd starts without Redis and connects as soon as it answers (calls meanwhile: UNAVAILABLE, `REDIS_ERROR_ANSWER`)", ""},
    {"REDIS_STARTUP_MAX_INTERVAL", T::duration, "30s", U::no_effect, "as REDIS_STARTUP_INITIAL_INTERVAL", ""},
    {"REDIS_STARTUP_MAX_ELAPSED_TIME", T::duration, "0", U::no_effect, "as REDIS_STARTUP_INITIAL_INTERVAL", ""},
    {"MEMCACHE_HOST_PORT", T::list, "", U::no_effect, memcache_only, ""},
    {"MEMCACHE_MAX_IDLE_CONNS", T::integer, "2", U::no_effect, memcache_only, ""},
    {"MEMCACHE_SRV", T::text, "", U::no_effect, memcache_only, ""},
    {"MEMCACHE_SRV_REFRESH", T::duration, "0", U::no_effect, memcache_only, ""},
    {"MEMCACHE_TLS", T::boolean, "false", U::no_effect, memcache_only, ""},
    {"MEMCACHE_TLS_CLIENT_CERT", T::text, "", U::no_effect, memcache_only, ""},
    {"MEMCACHE_TLS_CLIENT_KEY", T::text, "", U::no_effect, memcache_only, ""},
    {"MEMCACHE_TLS_CACERT", T::text, "", U::no_effect, memcache_only, ""},
    {"MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION", T::boolean, "false", U::no_effect, memcache_only, ""},
    {"SHADOW_MODE", T::boolean, "false", U::mapped,
     "`RATELIMITD_ENVOY_SHADOW_MODE`: every call answers OK overall, descriptors still say OVER_LIMIT", ""},
    {"QUOTA_MODE", T::boolean, "false", U::mapped,
     "`RATELIMITD_ENVOY_QUOTA_MODE`: every limited descriptor in quota mode (a call is over only when all are)", ""},
    {"RESPONSE_DYNAMIC_METADATA", T::boolean, "false", U::refused, "dynamic metadata in answers is not supported",
     "true"},
    {"MERGE_DOMAIN_CONFIG", T::boolean, "false", U::mapped,
     "true: files naming one domain are merged; false: a domain in two files refuses the config", ""},
    {"TRACING_ENABLED", T::boolean, "false", U::mapped,
     "spans over OTLP to `OTEL_EXPORTER_OTLP_ENDPOINT` (docs/tracing.md); false: tracing off, whatever `OTEL_*` say", ""},
    {"TRACING_SERVICE_NAME", T::text, "RateLimit", U::mapped, "`service.name` (`OTEL_SERVICE_NAME`)", ""},
    {"TRACING_SERVICE_NAMESPACE", T::text, "", U::mapped, "`service.namespace` (`RATELIMITD_TRACE_SERVICE_NAMESPACE`)", ""},
    {"TRACING_SERVICE_INSTANCE_ID", T::text, "", U::mapped,
     "`service.instance.id` (`RATELIMITD_TRACE_SERVICE_INSTANCE_ID`); empty: a random UUID, as it does", ""},
    {"TRACING_EXPORTER_PROTOCOL", T::text, "http", U::mapped,
     "`http` (OTLP/HTTP protobuf) or `grpc` (`OTEL_EXPORTER_OTLP_PROTOCOL`); anything else is refused", ""},
    {"TRACING_SAMPLING_RATE", T::number, "1", U::mapped,
     "`OTEL_TRACES_SAMPLER_ARG` of `parentbased_traceidratio`, clamped to 0..1", ""},
};

}  // namespace

std::span<const ErlVariable> erl_variables() noexcept { return rows; }

const ErlVariable* find_erl_variable(std::string_view name) noexcept {
    for (const auto& row : rows) {
        if (row.name == name) return &row;
    }
    return nullptr;
}

std::string_view to_string(ErlUse use) noexcept {
    switch (use) {
        case ErlUse::mapped: return "mapped";
        case ErlUse::no_effect: return "no effect";
        case ErlUse::refused: return "refused";
    }
    return "?";
}

}  // namespace ratelimitd::erl
