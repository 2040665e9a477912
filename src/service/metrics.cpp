// Metrics: per-thread counters on the hot path (no lock), summed per label set at scrape.
#include "ratelimitd/service/metrics.hpp"

#include "ratelimitd/core/same_text.hpp"

#include "ratelimitd/service/process_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

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

/// Appends `name="value"` (escaped) to `out`.
void append_label(std::string& out, std::string_view name, std::string_view value) {
    out += name;
    out += "=\"";
    for (char c : value) {
        if (c == '\\' || c == '"') out.push_back('\\');
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out.push_back(c);
    }
    out.push_back('"');
}

/// Sums family `F` of every shard by label set, sorted by label text.
template <std::size_t N>
std::map<std::string, std::array<std::uint64_t, N>> merged(const ThreadCounters* shard,
                                                           const OwnedFamily<N> ThreadCounters::*family) {
    std::map<std::string, std::array<std::uint64_t, N>> sums;
    for (; shard != nullptr; shard = shard->next) {
        (shard->*family).for_each([&sums](const std::string& labels, const auto& cells) {
            auto& sum = sums.try_emplace(labels).first->second;  // value-initialized: zeros
            for (std::size_t i = 0; i < N; ++i) sum[i] += cells[i].get();
        });
    }
    return sums;
}

std::atomic<std::uint64_t> next_metrics_id{1};

double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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

Metrics::Metrics() : id_(next_metrics_id.fetch_add(1, std::memory_order_relaxed)) {
    last_reload_at_.store(unix_now(), std::memory_order_relaxed);  // the start-up load
}

Metrics::~Metrics() {
    for (ThreadCounters* s = shards_.load(std::memory_order_acquire); s != nullptr;) {
        ThreadCounters* next = s->next;
        delete s;
        s = next;
    }
}

namespace {

// Keyed by the instance's id, not its address: a Metrics made where a destroyed one was
// (tests) must not inherit its freed shard. Ids start at 1: 0 is no instance.
struct Seen {
    std::uint64_t id = 0;
    ThreadCounters* shard = nullptr;
};

// The shard this thread used last: a check counts through it several times, and a process
// has one Metrics, so the vector below is walked only on a thread's first count of each.
thread_local Seen last_seen;

}  // namespace

ThreadCounters& Metrics::mine() {
    if (last_seen.id == id_) return *last_seen.shard;
    thread_local std::vector<Seen> seen;
    for (auto& s : seen) {
        if (s.id == id_) {
            last_seen = s;
            return *s.shard;
        }
    }
    auto* shard = new ThreadCounters;
    shard->next = shards_.load(std::memory_order_relaxed);
    while (!shards_.compare_exchange_weak(shard->next, shard, std::memory_order_release, std::memory_order_relaxed)) {
    }
    seen.push_back({id_, shard});
    last_seen = seen.back();
    return *shard;
}

OwnedFamily<policy_cell_count>::Cells& Metrics::policy_cells(std::string_view policy) {
    ThreadCounters& t = mine();
    if (t.last_policy_cells != nullptr && same_text(t.last_policy, policy)) return *t.last_policy_cells;
    t.scratch.clear();
    append_label(t.scratch, "policy", policy);
    t.last_policy_cells = &t.policies.at(t.scratch);
    t.last_policy = policy;
    return *t.last_policy_cells;
}

void Metrics::count_check(std::string_view policy, Outcome outcome, bool near_limit) {
    auto& c = policy_cells(policy);
    c[static_cast<std::size_t>(outcome)].add(1);
    if (near_limit) c[near_limit_cell].add(1);
}

void Metrics::count_units(std::string_view policy, bool allowed, std::uint64_t units) {
    policy_cells(policy)[allowed ? units_allowed_cell : units_denied_cell].add(units);
}

void Metrics::count_verdict(std::string_view policy, Outcome outcome, bool near_limit, std::uint64_t units,
                            bool cache_hit) {
    auto& c = policy_cells(policy);
    c[static_cast<std::size_t>(outcome)].add(1);
    if (near_limit) c[near_limit_cell].add(1);
    const bool refused = outcome == Outcome::denied || outcome == Outcome::shadow_denied ||
                         outcome == Outcome::failed_closed;
    c[refused ? units_denied_cell : units_allowed_cell].add(units);
    if (cache_hit) c[denial_cache_hit_cell].add(1);
}

void Metrics::count_denial_cache_hit(std::string_view policy) { policy_cells(policy)[denial_cache_hit_cell].add(1); }

void Metrics::count_refund(std::string_view policy, std::uint64_t units) {
    auto& c = policy_cells(policy);
    c[refunds_cell].add(1);
    c[refunded_units_cell].add(units);
}

void Metrics::observe_answer_time(std::string_view route, std::chrono::nanoseconds d) {
    observe_answer_time(mine(), route, d);
}

void Metrics::count_answer(std::string_view route, unsigned status, std::chrono::nanoseconds d) {
    ThreadCounters& t = mine();
    t.requests_finished.add(1);
    count_http(t, route, status);
    observe_answer_time(t, route, d);
}

void Metrics::observe_answer_time(ThreadCounters& t, std::string_view route, std::chrono::nanoseconds d) {
    if (t.last_duration_cells == nullptr || !same_text(t.last_duration_route, route)) {
        t.scratch.clear();
        append_label(t.scratch, "route", route);
        t.last_duration_cells = &t.http_durations.at(t.scratch);
        t.last_duration_route = route;
    }
    auto& c = *t.last_duration_cells;
    const double s = std::chrono::duration<double>(d).count();
    for (std::size_t i = 0; i < http_duration_buckets.size(); ++i) {
        if (s <= http_duration_buckets[i]) {
            c[i].add(1);
            break;
        }
    }
    c[duration_count_cell].add(1);
    c[duration_sum_cell].add(static_cast<std::uint64_t>(d.count() > 0 ? d.count() : 0));
}

void Metrics::count_reload(bool ok) noexcept {
    (ok ? reloads_ok_ : reloads_failed_).fetch_add(1, std::memory_order_relaxed);
    last_reload_ok_.store(ok, std::memory_order_relaxed);
    last_reload_at_.store(unix_now(), std::memory_order_relaxed);
}

void Metrics::count_store_error(errc code) {
    const std::size_t i = code == errc::store_timeout ? 0 : code == errc::store_unavailable ? 1 : 2;
    store_errors_[i].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::observe_store_latency(std::chrono::nanoseconds d) {
    auto& c = mine().store_latency;
    const double s = std::chrono::duration<double>(d).count();
    for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
        if (s <= latency_buckets[i]) {
            c[i].add(1);
            break;
        }
    }
    c[store_latency_count_cell].add(1);
    c[store_latency_sum_cell].add(static_cast<std::uint64_t>(d.count() > 0 ? d.count() : 0));
}

void Metrics::count_http(std::string_view route, unsigned status) { count_http(mine(), route, status); }

void Metrics::count_http(ThreadCounters& t, std::string_view route, unsigned status) {
    if (t.last_request_cells == nullptr || t.last_request_status != status || !same_text(t.last_request_route, route)) {
        t.scratch.clear();
        append_label(t.scratch, "route", route);
        fmt::format_to(std::back_inserter(t.scratch), ",status=\"{}\"", status);
        t.last_request_cells = &t.http_requests.at(t.scratch);
        t.last_request_route = route;
        t.last_request_status = status;
    }
    (*t.last_request_cells)[0].add(1);
}

void Metrics::set_store_series(std::function<std::vector<MetricFamily>()> series) {
    std::lock_guard lock(mu_);
    store_series_ = std::move(series);
}

std::string Metrics::render(std::string_view version, std::string_view store) const {
    std::string out;
    out.reserve(4096);
    std::lock_guard lock(mu_);
    header(out, "ratelimitd_build_info", "gauge", "Build and store of this process (value is always 1).");
    line(out, "ratelimitd_build_info{{version=\"{}\",store=\"{}\"}} 1\n", label(version), label(store));
    render_checks(out);
    delays.render(out);
    render_store(out);
    render_store_series(out);
    render_http(out);
    render_process(out);
    return out;
}

void Metrics::render_checks(std::string& out) const {
    const auto policies = merged(shards_.load(std::memory_order_acquire), &ThreadCounters::policies);
    header(out, "ratelimitd_checks_total", "counter", "Checks decided, by policy and verdict.");
    for (const auto& [labels, c] : policies) {
        for (Outcome o : all_outcomes) {
            line(out, "ratelimitd_checks_total{{{},verdict=\"{}\"}} {}\n", labels, to_string(o),
                 c[static_cast<std::size_t>(o)]);
        }
    }
    header(out, "ratelimitd_checks_near_limit_total", "counter",
           "Allowed checks that left less than 10% of the limit, by policy.");
    for (const auto& [labels, c] : policies) {
        line(out, "ratelimitd_checks_near_limit_total{{{}}} {}\n", labels, c[near_limit_cell]);
    }
    header(out, "ratelimitd_cost_units_total", "counter",
           "Units (the checks' cost) each policy admitted or refused, by policy and verdict.");
    for (const auto& [labels, c] : policies) {
        line(out, "ratelimitd_cost_units_total{{{},verdict=\"allowed\"}} {}\n", labels, c[units_allowed_cell]);
        line(out, "ratelimitd_cost_units_total{{{},verdict=\"denied\"}} {}\n", labels, c[units_denied_cell]);
    }
    header(out, "ratelimitd_denial_cache_hits_total", "counter",
           "Checks denied from the denial cache without a store round trip, by policy.");
    for (const auto& [labels, c] : policies) {
        line(out, "ratelimitd_denial_cache_hits_total{{{}}} {}\n", labels, c[denial_cache_hit_cell]);
    }
    header(out, "ratelimitd_refunds_total", "counter",
           "Reports with a negative cost (units given back, an operator's act), by policy.");
    for (const auto& [labels, c] : policies) {
        line(out, "ratelimitd_refunds_total{{{}}} {}\n", labels, c[refunds_cell]);
    }
    header(out, "ratelimitd_refunded_units_total", "counter",
           "Units those refunds asked to give back (never above a key's capacity), by policy.");
    for (const auto& [labels, c] : policies) {
        line(out, "ratelimitd_refunded_units_total{{{}}} {}\n", labels, c[refunded_units_cell]);
    }
}

namespace {

// The policy name inside its rendered label set, `policy="..."`, unescaped.
std::string policy_of(const std::string& labels) {
    const auto open = labels.find("=\"");
    std::string out;
    if (open == std::string::npos) return out;
    for (std::size_t i = open + 2; i + 1 < labels.size(); ++i) {
        if (labels[i] == '\\' && i + 2 < labels.size()) {
            ++i;
            out.push_back(labels[i] == 'n' ? '\n' : labels[i]);
            continue;
        }
        out.push_back(labels[i]);
    }
    return out;
}

}  // namespace

MetricTotals Metrics::totals() const {
    MetricTotals t;
    const ThreadCounters* shards = shards_.load(std::memory_order_acquire);
    for (const auto& [labels, c] : merged(shards, &ThreadCounters::policies)) {
        for (std::size_t o = 0; o < t.checks.size(); ++o) t.checks[o] += c[o];
        const std::uint64_t refused = c[static_cast<std::size_t>(Outcome::denied)] +
                                      c[static_cast<std::size_t>(Outcome::failed_closed)];
        if (refused > 0) t.denied[policy_of(labels)] += refused;
    }
    std::uint64_t counted = 0;
    for (const ThreadCounters* s = shards; s != nullptr; s = s->next) {
        for (std::size_t i = 0; i < t.store_latency.size(); ++i) t.store_latency[i] += s->store_latency[i].get();
        counted += s->store_latency[store_latency_count_cell].get();
    }
    std::uint64_t in_buckets = 0;
    for (const std::uint64_t n : t.store_latency) in_buckets += n;
    t.store_latency_over = counted > in_buckets ? counted - in_buckets : 0;
    for (const auto& e : store_errors_) t.store_errors += e.load(std::memory_order_relaxed);
    return t;
}

void Metrics::render_store(std::string& out) const {
    header(out, "ratelimitd_store_errors_total", "counter", "Store commands that failed, by kind.");
    static constexpr const char* kinds[] = {"timeout", "unavailable", "bad_reply"};
    for (std::size_t i = 0; i < store_errors_.size(); ++i) {
        line(out, "ratelimitd_store_errors_total{{kind=\"{}\"}} {}\n", kinds[i],
             store_errors_[i].load(std::memory_order_relaxed));
    }

    header(out, "ratelimitd_store_latency_seconds", "histogram", "Time from asking the store to its verdict.");
    std::array<std::uint64_t, store_latency_sum_cell + 1> sums{};
    for (const ThreadCounters* t = shards_.load(std::memory_order_acquire); t != nullptr; t = t->next) {
        for (std::size_t i = 0; i < sums.size(); ++i) sums[i] += t->store_latency[i].get();
    }
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
        cumulative += sums[i];
        line(out, "ratelimitd_store_latency_seconds_bucket{{le=\"{}\"}} {}\n", latency_buckets[i], cumulative);
    }
    // A check counted while this read ran may show in its bucket and not yet in the count.
    const auto total = std::max(sums[store_latency_count_cell], cumulative);
    line(out, "ratelimitd_store_latency_seconds_bucket{{le=\"+Inf\"}} {}\n", total);
    line(out, "ratelimitd_store_latency_seconds_sum {}\n", static_cast<double>(sums[store_latency_sum_cell]) / 1e9);
    line(out, "ratelimitd_store_latency_seconds_count {}\n", total);
}

void Metrics::render_store_series(std::string& out) const {
    if (!store_series_) return;
    for (const MetricFamily& f : store_series_()) {
        header(out, f.name.c_str(), f.type.c_str(), f.help.c_str());
        for (const MetricSample& s : f.samples) {
            if (s.labels.empty()) line(out, "{} {}\n", f.name, s.value);
            else line(out, "{}{{{}}} {}\n", f.name, s.labels, s.value);
        }
    }
}

void Metrics::render_http(std::string& out) const {
    header(out, "ratelimitd_http_requests_total", "counter", "HTTP requests answered, by route and status.");
    for (const auto& [labels, n] : merged(shards_.load(std::memory_order_acquire), &ThreadCounters::http_requests)) {
        line(out, "ratelimitd_http_requests_total{{{}}} {}\n", labels, n[0]);
    }
    render_durations(out);
    header(out, "ratelimitd_connections_open", "gauge", "Client connections open.");
    line(out, "ratelimitd_connections_open {}\n", connections_open_.load(std::memory_order_relaxed));
    header(out, "ratelimitd_connections_accepted_total", "counter",
           "Client connections accepted and served (refused ones not included).");
    line(out, "ratelimitd_connections_accepted_total {}\n", connections_accepted_.load(std::memory_order_relaxed));
    header(out, "ratelimitd_connections_rejected_total", "counter",
           "Connections answered 503 and closed because max_connections were open.");
    line(out, "ratelimitd_connections_rejected_total {}\n", connections_rejected_.load(std::memory_order_relaxed));
    header(out, "ratelimitd_requests_in_flight", "gauge", "Requests being answered.");
    line(out, "ratelimitd_requests_in_flight {}\n", in_flight());
    header(out, "ratelimitd_auth_unmatched_total", "counter",
           "/v1/auth requests no route matched with no default_policy set: answered 200 without any limit.");
    line(out, "ratelimitd_auth_unmatched_total {}\n", auth_unmatched_.load(std::memory_order_relaxed));
}

std::int64_t Metrics::in_flight() const {
    std::int64_t n = 0;
    for (const ThreadCounters* t = shards_.load(std::memory_order_acquire); t != nullptr; t = t->next) {
        // finished first: a request that ends while this reads is then counted as in flight
        // rather than as finished and never started.
        const auto finished = static_cast<std::int64_t>(t->requests_finished.get());
        n += static_cast<std::int64_t>(t->requests_started.get()) - finished;
    }
    return std::max<std::int64_t>(n, 0);
}

void Metrics::render_durations(std::string& out) const {
    header(out, "ratelimitd_http_request_duration_seconds", "histogram",
           "ratelimitd's own answer time, from the request read to the response ready, by route.");
    for (const auto& [labels, c] :
         merged(shards_.load(std::memory_order_acquire), &ThreadCounters::http_durations)) {
        std::uint64_t cumulative = 0;
        for (std::size_t i = 0; i < http_duration_buckets.size(); ++i) {
            cumulative += c[i];
            line(out, "ratelimitd_http_request_duration_seconds_bucket{{{},le=\"{}\"}} {}\n", labels,
                 http_duration_buckets[i], cumulative);
        }
        line(out, "ratelimitd_http_request_duration_seconds_bucket{{{},le=\"+Inf\"}} {}\n", labels,
             c[duration_count_cell]);
        line(out, "ratelimitd_http_request_duration_seconds_sum{{{}}} {}\n", labels, c[duration_sum_cell] / 1e9);
        line(out, "ratelimitd_http_request_duration_seconds_count{{{}}} {}\n", labels, c[duration_count_cell]);
    }
}

void Metrics::render_process(std::string& out) const {
    header(out, "ratelimitd_reloads_total", "counter", "Config reloads (SIGHUP, a change on disk, an xDS config applied or refused by the store), by result.");
    line(out, "ratelimitd_reloads_total{{result=\"success\"}} {}\n", reloads_ok_.load(std::memory_order_relaxed));
    line(out, "ratelimitd_reloads_total{{result=\"failure\"}} {}\n", reloads_failed_.load(std::memory_order_relaxed));
    header(out, "ratelimitd_config_last_reload_success", "gauge",
           "Whether the last config load (start-up or reload) succeeded: 1, or 0 when it was refused.");
    line(out, "ratelimitd_config_last_reload_success {}\n", last_reload_ok_.load(std::memory_order_relaxed) ? 1 : 0);
    header(out, "ratelimitd_config_last_reload_timestamp_seconds", "gauge",
           "Unix time of the last config load attempt (start-up or reload), successful or not.");
    line(out, "ratelimitd_config_last_reload_timestamp_seconds {}\n",
         last_reload_at_.load(std::memory_order_relaxed));
    if (const auto p = ProcessStats::read()) p->render(out);
    header(out, "ratelimitd_access_log_dropped_total", "counter",
           "Access log lines not written because of the access log rate limit.");
    line(out, "ratelimitd_access_log_dropped_total {}\n", access_log_dropped_.load(std::memory_order_relaxed));
}

}  // namespace ratelimitd::service
