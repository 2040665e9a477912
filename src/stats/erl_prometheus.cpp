// ErlPrometheus: each counter mapped once (names are fixed once made), the values read at
// each scrape.
#include "ratelimitd/stats/erl_prometheus.hpp"

#include "ratelimitd/core/label_value.hpp"

#include <fmt/format.h>

#include <map>

namespace ratelimitd::stats {

namespace {

std::pair<std::string, std::string> series_of(const StatsdMapper& mapper, std::string_view name) {
    auto mapped = mapper.map(name);
    if (!mapped) return {StatsdMapper::escape_name(name), ""};
    std::string labels;
    for (const auto& [label, value] : mapped->labels) {
        labels += (labels.empty() ? "" : ",") + label + "=\"" + escape_label_value(value) + "\"";
    }
    return {std::move(mapped->name), labels};
}

}  // namespace

std::string ErlPrometheus::render() {
    stats_.refresh_config_loads();
    const ErlStatTable& table = stats_.table();
    std::lock_guard lock(mu_);
    const std::size_t n = table.size();
    for (std::size_t i = series_.size(); i < n; ++i) series_.push_back(series_of(mapper_, table.at(i).name));
    std::map<std::string, std::map<std::string, std::uint64_t>> families;
    for (std::size_t i = 0; i < n; ++i) {
        const auto v = table.at(i).value.load(std::memory_order_relaxed);
        if (v == 0) continue;  // a series appears with its first count, as statsd_exporter makes it
        families[series_[i].first][series_[i].second] += v;
    }
    std::string out;
    for (const auto& [name, series] : families) {
        fmt::format_to(std::back_inserter(out), "# TYPE {} counter\n", name);
        for (const auto& [labels, v] : series) {
            fmt::format_to(std::back_inserter(out), "{}{}{}{} {}\n", name, labels.empty() ? "" : "{", labels,
                           labels.empty() ? "" : "}", v);
        }
    }
    return out;
}

}  // namespace ratelimitd::stats
