// Metrics: lock-free counters on the hot path, one lock per scrape for the label maps.
#include "ratelimitd/service/metrics.hpp"

#include <fmt/format.h>

namespace ratelimitd::service {

namespace {

constexpr std::array<Outcome, 5> all_outcomes{Outcome::allowed, Outcome::denied, Outcome::shadow_denied,
                                              Outcome::degraded_allowed, Outcome::failed_closed};

// Prometheus label values: escape \, " and newline (policy names never need it; be safe).
std::string label(std::string_view v) {
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"') out.push_back('\\');
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out.push_back(c);
    }
    return out;
}

template <class... Args>
void line(std::string& out, fmt::format_string<Args...> f, Args&&... args) {
    fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
}

void header(std::string& out, const char* name, const char* type, const char* help) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

const char* to_string(Outcome o) noexcept {
    switch (o) {
    case Outcome::allowed: return "allowed";
    case Outcome::denied: return "denied";
    case Outcome::shadow_denied: return "shadow_denied";
    case Outcome::degraded_allowed: return "degraded_allowed";
    case Outcome::failed_closed: return "failed_closed";
    }
    return "unknown";
}

Metrics::PolicyCounters& Metrics::for_policy(std::string_view policy) {
    std::lock_guard lock(mu_);
    auto it = policies_.find(policy);
    if (it == policies_.end()) it = policies_.emplace(std::string(policy), std::make_unique<PolicyCounters>()).first;
    return *it->second;
}

void Metrics::count_check(std::string_view policy, Outcome outcome, bool near_limit) {
    auto& c = for_policy(policy);
    c.by_outcome[static_cast<std::size_t>(outcome)].fetch_add(1, std::memory_order_relaxed);
    if (near_limit) c.near_limit.fetch_add(1, std::memory_order_relaxed);
}

void Metrics::count_store_error(errc code) {
    const std::size_t i = code == errc::store_timeout ? 0 : code == errc::store_unavailable ? 1 : 2;
    store_errors_[i].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::observe_store_latency(std::chrono::nanoseconds d) {
    const double s = std::chrono::duration<double>(d).count();
    for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
        if (s <= latency_buckets[i]) {
            latency_counts_[i].fetch_add(1, std::memory_order_relaxed);
            break;
        }
    }
    latency_total_.fetch_add(1, std::memory_order_relaxed);
    latency_sum_ns_.fetch_add(static_cast<std::uint64_t>(d.count()), std::memory_order_relaxed);
}

void Metrics::count_http(std::string_view route, unsigned status) {
    std::lock_guard lock(mu_);
    ++http_[{std::string(route), status}];
}

void Metrics::set_breaker_gauge(std::function<int()> open_breakers) {
    std::lock_guard lock(mu_);
    open_breakers_ = std::move(open_breakers);
}

void Metrics::set_coalescing_stats(std::function<CoalescingStats()> stats) {
    std::lock_guard lock(mu_);
    coalescing_stats_ = std::move(stats);
}

void Metrics::set_cluster_redirects(std::function<ClusterRedirects()> redirects) {
    std::lock_guard lock(mu_);
    cluster_redirects_ = std::move(redirects);
}

void Metrics::set_memory_store_stats(std::function<MemoryStoreStats()> stats) {
    std::lock_guard lock(mu_);
    memory_store_stats_ = std::move(stats);
}

std::string Metrics::render(std::string_view version, std::string_view store) const {
    std::string out;
    out.reserve(4096);
    std::lock_guard lock(mu_);
    header(out, "ratelimitd_build_info", "gauge", "Build and store of this process (value is always 1).");
    line(out, "ratelimitd_build_info{{version=\"{}\",store=\"{}\"}} 1\n", label(version), label(store));
    render_checks(out);
    render_store(out);
    render_redis(out);
    render_http(out);
    render_process(out);
    return out;
}

void Metrics::render_checks(std::string& out) const {
    header(out, "ratelimitd_checks_total", "counter", "Checks decided, by policy and verdict.");
    for (const auto& [name, c] : policies_) {
        for (Outcome o : all_outcomes) {
            line(out, "ratelimitd_checks_total{{policy=\"{}\",verdict=\"{}\"}} {}\n", label(name), to_string(o),
                 c->by_outcome[static_cast<std::size_t>(o)].load(std::memory_order_relaxed));
        }
    }
    header(out, "ratelimitd_checks_near_limit_total", "counter",
           "Allowed checks that left less than 10% of the limit, by policy.");
    for (const auto& [name, c] : policies_) {
        line(out, "ratelimitd_checks_near_limit_total{{policy=\"{}\"}} {}\n", label(name),
             c->near_limit.load(std::memory_order_relaxed));
    }
}

void Metrics::render_store(std::string& out) const {
    header(out, "ratelimitd_store_errors_total", "counter", "Store commands that failed, by kind.");
    static constexpr const char* kinds[] = {"timeout", "unavailable", "bad_reply"};
    for (std::size_t i = 0; i < store_errors_.size(); ++i) {
        line(out, "ratelimitd_store_errors_total{{kind=\"{}\"}} {}\n", kinds[i],
             store_errors_[i].load(std::memory_order_relaxed));
    }

    header(out, "ratelimitd_store_latency_seconds", "histogram", "Time from asking the store to its verdict.");
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
        cumulative += latency_counts_[i].load(std::memory_order_relaxed);
        line(out, "ratelimitd_store_latency_seconds_bucket{{le=\"{}\"}} {}\n", latency_buckets[i], cumulative);
    }
    const auto total = latency_total_.load(std::memory_order_relaxed);
    line(out, "ratelimitd_store_latency_seconds_bucket{{le=\"+Inf\"}} {}\n", total);
    line(out, "ratelimitd_store_latency_seconds_sum {}\n", latency_sum_ns_.load(std::memory_order_relaxed) / 1e9);
    line(out, "ratelimitd_store_latency_seconds_count {}\n", total);

    header(out, "ratelimitd_circuit_breakers_open", "gauge",
           "Server threads whose circuit breaker holds checks back from the store.");
    line(out, "ratelimitd_circuit_breakers_open {}\n", open_breakers_ ? open_breakers_() : 0);
}

void Metrics::render_redis(std::string& out) const {
    if (coalescing_stats_) {
        const CoalescingStats c = coalescing_stats_();
        header(out, "ratelimitd_redis_check_calls_total", "counter",
               "Script calls sent to Redis for single checks; with coalescing, one per batch.");
        line(out, "ratelimitd_redis_check_calls_total {}\n", c.script_calls);
        header(out, "ratelimitd_redis_coalesced_checks_total", "counter",
               "Single checks those calls carried (divided by the calls: the mean batch size).");
        line(out, "ratelimitd_redis_coalesced_checks_total {}\n", c.checks);
    }
    if (cluster_redirects_) {
        const ClusterRedirects r = cluster_redirects_();
        header(out, "ratelimitd_redis_cluster_redirects_total", "counter",
               "MOVED and ASK redirects followed to another Redis Cluster node.");
        line(out, "ratelimitd_redis_cluster_redirects_total{{kind=\"moved\"}} {}\n", r.moved);
        line(out, "ratelimitd_redis_cluster_redirects_total{{kind=\"ask\"}} {}\n", r.ask);
    }
}

void Metrics::render_http(std::string& out) const {
    header(out, "ratelimitd_http_requests_total", "counter", "HTTP requests answered, by route and status.");
    for (const auto& [key, n] : http_) {
        line(out, "ratelimitd_http_requests_total{{route=\"{}\",status=\"{}\"}} {}\n", label(key.first),
             key.second, n);
    }
    header(out, "ratelimitd_connections_open", "gauge", "Client connections open.");
    line(out, "ratelimitd_connections_open {}\n", connections_open_.load(std::memory_order_relaxed));
    header(out, "ratelimitd_connections_rejected_total", "counter",
           "Connections answered 503 and closed because max_connections were open.");
    line(out, "ratelimitd_connections_rejected_total {}\n", connections_rejected_.load(std::memory_order_relaxed));
    header(out, "ratelimitd_requests_in_flight", "gauge", "Requests being answered.");
    line(out, "ratelimitd_requests_in_flight {}\n", in_flight_.load(std::memory_order_relaxed));
}

void Metrics::render_process(std::string& out) const {
    if (memory_store_stats_) {
        const MemoryStoreStats m = memory_store_stats_();
        header(out, "ratelimitd_memory_store_keys", "gauge",
               "Keys held by the embedded store (expired ones not yet swept included).");
        line(out, "ratelimitd_memory_store_keys {}\n", m.keys);
        header(out, "ratelimitd_memory_store_evictions_total", "counter",
               "Live keys the embedded store dropped to stay within memory_max_keys.");
        line(out, "ratelimitd_memory_store_evictions_total {}\n", m.evictions);
    }
    header(out, "ratelimitd_reloads_total", "counter", "Config reloads (SIGHUP), by result.");
    line(out, "ratelimitd_reloads_total{{result=\"success\"}} {}\n", reloads_ok_.load(std::memory_order_relaxed));
    line(out, "ratelimitd_reloads_total{{result=\"failure\"}} {}\n", reloads_failed_.load(std::memory_order_relaxed));
    header(out, "ratelimitd_access_log_dropped_total", "counter",
           "Access log lines not written because of the access log rate limit.");
    line(out, "ratelimitd_access_log_dropped_total {}\n", access_log_dropped_.load(std::memory_order_relaxed));
}

}  // namespace ratelimitd::service
