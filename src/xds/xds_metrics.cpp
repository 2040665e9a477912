// XdsMetrics: counters and gauges as Prometheus text; the version is the control plane's text,
// so it is cut and escaped before it becomes a label.
#include "ratelimitd/xds/xds_metrics.hpp"

#include <fmt/format.h>

namespace ratelimitd::xds {
namespace {

// A label value: printable ASCII, '"' and '\' escaped, at most 128 bytes of the original.
std::string label_value(const std::string& text) {
    std::string out;
    for (const char c : text.substr(0, 128)) {
        if (c == '"' || c == '\\') out.push_back('\\');
        out.push_back(c >= 0x20 && c <= 0x7e ? c : '?');
    }
    return out;
}

// ratelimitd_xds_apply_seconds' bucket bounds: a small config applies in milliseconds, 90,000
// descriptors within a second; beyond 10 s the control plane waits too long for its ACK.
constexpr std::array<double, 10> apply_bounds{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10};

}  // namespace

void XdsMetrics::count_accepted(const std::string& version, std::size_t domains, std::int64_t now_s,
                                std::chrono::steady_clock::duration took) {
    accepted_.fetch_add(1, std::memory_order_relaxed);
    const double seconds = std::chrono::duration<double>(took).count();
    std::lock_guard lock(mu_);
    version_ = version;
    domains_ = domains;
    accepted_at_s_ = now_s;
    last_apply_s_ = seconds;
    ++applies_;
    apply_sum_s_ += seconds;
    for (std::size_t i = 0; i < apply_bounds.size(); ++i) {
        if (seconds <= apply_bounds[i]) {
            ++apply_buckets_[i];
            break;
        }
    }
}

std::string XdsMetrics::render_apply() const {
    std::string out = "# HELP ratelimitd_xds_apply_seconds From an xDS config's arrival to its rules serving checks "
                      "(its ACK follows).\n# TYPE ratelimitd_xds_apply_seconds histogram\n";
    std::lock_guard lock(mu_);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < apply_bounds.size(); ++i) {
        cumulative += apply_buckets_[i];
        out += fmt::format("ratelimitd_xds_apply_seconds_bucket{{le=\"{}\"}} {}\n", apply_bounds[i], cumulative);
    }
    out += fmt::format("ratelimitd_xds_apply_seconds_bucket{{le=\"+Inf\"}} {}\nratelimitd_xds_apply_seconds_sum {}\n"
                       "ratelimitd_xds_apply_seconds_count {}\n",
                       applies_, apply_sum_s_, applies_);
    out += fmt::format("# HELP ratelimitd_xds_last_apply_seconds The apply time of the xDS config in force.\n"
                       "# TYPE ratelimitd_xds_last_apply_seconds gauge\nratelimitd_xds_last_apply_seconds {}\n",
                       last_apply_s_);
    return out;
}

std::string XdsMetrics::render() const {
    std::string version;
    std::size_t domains = 0;
    std::int64_t at = 0;
    {
        std::lock_guard lock(mu_);
        version = version_;
        domains = domains_;
        at = accepted_at_s_;
    }
    std::string out;
    out += fmt::format("# HELP ratelimitd_xds_connected 1 while the xDS stream to the control plane is open.\n"
                       "# TYPE ratelimitd_xds_connected gauge\nratelimitd_xds_connected {}\n",
                       connected_.load(std::memory_order_relaxed) ? 1 : 0);
    out += fmt::format("# HELP ratelimitd_xds_streams_total xDS streams opened to the control plane.\n"
                       "# TYPE ratelimitd_xds_streams_total counter\nratelimitd_xds_streams_total {}\n",
                       streams_.load(std::memory_order_relaxed));
    out += fmt::format("# HELP ratelimitd_xds_updates_total xDS configs accepted (ACK) and refused (NACK).\n"
                       "# TYPE ratelimitd_xds_updates_total counter\n"
                       "ratelimitd_xds_updates_total{{outcome=\"accepted\"}} {}\n"
                       "ratelimitd_xds_updates_total{{outcome=\"rejected\"}} {}\n",
                       accepted_.load(std::memory_order_relaxed), rejected_.load(std::memory_order_relaxed));
    out += fmt::format("# HELP ratelimitd_xds_superseded_total xDS configs dropped unapplied and unanswered: a newer "
                       "one arrived while an earlier one was applied.\n# TYPE ratelimitd_xds_superseded_total counter\n"
                       "ratelimitd_xds_superseded_total {}\n",
                       superseded_.load(std::memory_order_relaxed));
    out += render_apply();
    if (at != 0) {
        out += fmt::format("# HELP ratelimitd_xds_config_info The xDS config in force: its version.\n"
                           "# TYPE ratelimitd_xds_config_info gauge\nratelimitd_xds_config_info{{version=\"{}\"}} 1\n",
                           label_value(version));
        out += fmt::format("# HELP ratelimitd_xds_config_domains Domains of the xDS config in force.\n"
                           "# TYPE ratelimitd_xds_config_domains gauge\nratelimitd_xds_config_domains {}\n",
                           domains);
        out += fmt::format("# HELP ratelimitd_xds_config_accepted_timestamp_seconds When the xDS config in force "
                           "was accepted.\n# TYPE ratelimitd_xds_config_accepted_timestamp_seconds gauge\n"
                           "ratelimitd_xds_config_accepted_timestamp_seconds {}\n",
                           at);
    }
    return out;
}

}  // namespace ratelimitd::xds
