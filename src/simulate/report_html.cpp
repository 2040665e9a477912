// The HTML page: one file, no script, no external font or image; the chart is inline SVG.
#include "ratelimitd/simulate/log_time.hpp"
#include "ratelimitd/simulate/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace ratelimitd::simulate {
namespace {

constexpr const char* palette[] = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

// Denials per minute, one polyline per policy that denied: x is the minute within the log's
// span, y the denials in it.
std::string chart(const Summary& s, const std::string& id) {
    std::set<std::string> denying;
    std::uint64_t peak = 0;
    for (const auto& m : s.per_minute) {
        for (const auto& [policy, n] : m.denied) {
            denying.insert(policy);
            peak = std::max(peak, n);
        }
    }
    if (denying.empty() || s.per_minute.empty()) return "<p class=\"none\">No request was denied.</p>\n";
    const double width = 900, height = 260, left = 50, bottom = 30, top = 10;
    const std::int64_t first = s.per_minute.front().minute_ms;
    const std::int64_t last = s.per_minute.back().minute_ms;
    const double span = static_cast<double>(std::max<std::int64_t>(last - first, 60'000));
    const auto x = [&](std::int64_t t) { return left + (width - left - 10) * static_cast<double>(t - first) / span; };
    const auto y = [&](std::uint64_t n) {
        return top + (height - top - bottom) * (1.0 - static_cast<double>(n) / static_cast<double>(peak));
    };
    std::string out = fmt::format(
        "<svg id=\"{}\" class=\"chart\" viewBox=\"0 0 {} {}\" width=\"{}\" "
        "height=\"{}\" role=\"img\" aria-label=\"denials per minute per policy\">\n",
        id, width, height, width, height);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/>\n", left, height - bottom,
                       width - 10, height - bottom);
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/>\n", left, top, left,
                       height - bottom);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">{}</text>\n", left - 4, top + 10,
                       peak);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">0</text>\n", left - 4,
                       height - bottom);
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>\n", left, height - 8,
                       escape(format_rfc3339(first)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">{}</text>\n", width - 10,
                       height - 8, escape(format_rfc3339(last)));
    std::size_t colour = 0;
    for (const auto& policy : denying) {
        std::string points;
        for (const auto& m : s.per_minute) {
            const auto it = m.denied.find(policy);
            const std::uint64_t n = it == m.denied.end() ? 0 : it->second;
            points += fmt::format("{:.1f},{:.1f} ", x(m.minute_ms), y(n));
        }
        out += fmt::format(
            "<polyline class=\"series\" data-policy=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
            "points=\"{}\"><title>{}</title></polyline>\n",
            escape(policy), palette[colour % std::size(palette)], points, escape(policy));
        ++colour;
    }
    out += "</svg>\n<p class=\"legend\">";
    colour = 0;
    for (const auto& policy : denying) {
        out += fmt::format("<span style=\"color:{}\">&#9632;</span> {} ", palette[colour++ % std::size(palette)],
                           escape(policy));
    }
    out += "</p>\n";
    return out;
}

// The policies that delayed (max_delay), when any did: how many and how long.
std::string delay_table(const Summary& s, const std::string& id) {
    std::string rows;
    for (const auto& [name, t] : s.policies) {
        if (t.delayed == 0) continue;
        rows += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                            "<td class=\"n\">{}</td></tr>\n",
                            escape(name), t.delayed, t.delay_p50_ms, t.delay_p99_ms, t.delay_max_ms);
    }
    if (rows.empty()) return rows;
    return fmt::format("<h3>Delayed (max_delay)</h3>\n<table id=\"{}-delays\"><thead><tr><th>policy</th><th>delayed</th>"
                       "<th>p50 ms</th><th>p99 ms</th><th>max ms</th></tr></thead><tbody>\n",
                       id) +
           rows + "</tbody></table>\n";
}

std::string tables(const Summary& s, std::size_t top, const std::string& id) {
    std::string out = fmt::format("<p>{} lines, {} requests, {} unparsed.</p>\n", s.lines, s.requests, s.unparsed);
    out += fmt::format("<table id=\"{}-policies\"><thead><tr><th>policy</th><th>checked</th><th>denied</th>"
                       "<th>tenants denied</th></tr></thead><tbody>\n",
                       id);
    for (const auto& [name, t] : s.policies) {
        out += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
                           escape(name), t.checked, t.denied, t.tenants_denied);
    }
    out += "</tbody></table>\n";
    out += delay_table(s, id);
    out += fmt::format("<h3>Tenants denied most</h3>\n<table id=\"{}-top\"><thead><tr><th>policy</th><th>tenant</th>"
                       "<th>denied</th><th>first denied</th></tr></thead><tbody>\n",
                       id);
    for (std::size_t i = 0; i < s.denials.size() && i < top; ++i) {
        const auto& d = s.denials[i];
        out += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>\n", escape(d.policy),
                           escape(d.tenant), d.denied, escape(format_rfc3339(d.first_denied_ms)));
    }
    out += "</tbody></table>\n";
    return out;
}

std::string pairs_table(const char* title, const char* id, const std::vector<PolicyTenant>& pairs) {
    std::string out = fmt::format("<h2>{} ({})</h2>\n<table id=\"{}\"><thead><tr><th>policy</th><th>tenant</th></tr>"
                                  "</thead><tbody>\n",
                                  title, pairs.size(), id);
    for (const auto& p : pairs) out += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", escape(p.policy), escape(p.tenant));
    return out + "</tbody></table>\n";
}

}  // namespace

std::string to_html(const Report& report) {
    std::string out =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        "<title>ratelimitd simulate</title>\n<style>\n"
        "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:0.5em 0 1.5em}"
        "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}td.n{text-align:right}"
        "svg.chart{background:#fafafa;border:1px solid #ddd}p.none{color:#2ca02c}\n"
        "</style></head><body>\n";
    out += fmt::format("<h1>ratelimitd simulate</h1>\n<p><code>{}</code> replayed against <code>{}</code>.</p>\n",
                       escape(report.log_name), escape(report.config_name));
    out += "<h2>Denials per minute</h2>\n" + chart(report.config, "chart");
    out += tables(report.config, report.top, "config");
    if (report.baseline) {
        out += fmt::format("<h2>Baseline <code>{}</code></h2>\n", escape(report.baseline_name));
        out += chart(*report.baseline, "baseline-chart");
        out += tables(*report.baseline, report.top, "baseline");
        out += pairs_table("Newly denied", "newly-denied", report.newly_denied);
        out += pairs_table("No longer denied", "no-longer-denied", report.no_longer_denied);
    }
    out += "</body></html>\n";
    return out;
}

}  // namespace ratelimitd::simulate
