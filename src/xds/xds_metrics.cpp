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

}  // namespace

void XdsMetrics::count_accepted(const std::string& version, std::size_t domains, std::int64_t now_s) {
    accepted_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(mu_);
    version_ = version;
    domains_ = domains;
    accepted_at_s_ = now_s;
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
