// The HTML page: one file, no script, no external font or image; the charts are inline SVG.
// It answers first: with a baseline the difference leads, then the charts, then the tables.
#include "ratelimitd/simulate/html_text.hpp"
#include "ratelimitd/simulate/log_time.hpp"
#include "ratelimitd/simulate/report.hpp"
#include "ratelimitd/simulate/report_charts.hpp"
#include "ratelimitd/simulate/share_text.hpp"

#include <fmt/format.h>

namespace ratelimitd::simulate {
namespace {

constexpr const char* page_style =
    "body{font-family:sans-serif;margin:1em auto;max-width:960px;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}td.n{text-align:right}"
    "tr.unmatched td{color:#666;font-style:italic}td.up{color:#d62728}td.down{color:#2ca02c}"
    "svg.chart{display:block;width:100%;max-width:900px;height:auto;background:#fafafa;border:1px solid #ddd}"
    "svg.chart text{font-size:12px;fill:#333}svg.chart line.grid{stroke:#e3e3e3}svg.chart line.tick{stroke:#999}"
    "rect.admitted{fill:#9ab}rect.denied{fill:#d62728}g.minute:hover rect{opacity:0.7}"
    "polyline.series{stroke-width:2}polyline.baseline{stroke-dasharray:6 4;opacity:0.8}"
    "span.swatch{display:inline-block;width:0.9em;height:0.9em;vertical-align:middle}"
    "span.swatch.admitted{background:#9ab}span.swatch.denied{background:#d62728}"
    "p.none{color:#2ca02c}p.legend{margin-top:0.3em}details{margin-bottom:1em}"
    // On a phone the 900-unit charts shrink to its width: their text is drawn larger to stay legible.
    "@media (max-width:600px){body{margin:0.5em;padding:0}th,td{padding:2px 4px}"
    "table{display:block;overflow-x:auto}svg.chart text{font-size:21px}svg.chart text.caption{display:none}}";


// The policies that delayed (max_delay), when any did: how many and how long.
std::string delay_table(const Summary& s, const std::string& id) {
    std::string rows;
    for (const auto& [name, t] : s.policies) {
        if (t.delayed == 0) continue;
        rows += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                            "<td class=\"n\">{}</td></tr>\n",
                            html_escape(name), t.delayed, t.delay_p50_ms, t.delay_p99_ms, t.delay_max_ms);
    }
    if (rows.empty()) return rows;
    return fmt::format("<h3>Delayed (max_delay)</h3>\n<table id=\"{}-delays\"><thead><tr><th>policy</th><th>delayed</th>"
                       "<th>p50 ms</th><th>p99 ms</th><th>max ms</th></tr></thead><tbody>\n",
                       id) +
           rows + "</tbody></table>\n";
}

// Per policy, then the requests no policy checked: with one policy per route, the checked
// column adds up to the requests.
std::string policy_table(const Summary& s, const std::string& id) {
    std::string out = fmt::format("<table id=\"{}-policies\"><thead><tr><th>policy</th><th>checked</th><th>denied</th>"
                                  "<th>denied %</th><th>tenants denied</th></tr></thead><tbody>\n",
                                  id);
    for (const auto& [name, t] : s.policies) {
        out += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                           "<td class=\"n\">{}</td></tr>\n",
                           html_escape(name), t.checked, t.denied, share_text(t.denied, t.checked), t.tenants_denied);
    }
    out += fmt::format("<tr class=\"unmatched\"><td>not limited</td><td class=\"n\">{}</td><td class=\"n\">-</td>"
                       "<td class=\"n\">-</td><td class=\"n\">-</td></tr>\n",
                       s.unmatched);
    return out + "</tbody></table>\n";
}

std::string tables(const Summary& s, std::size_t top, const std::string& id) {
    std::string out = fmt::format("<p>{} lines, {} requests ({} denied, {}), {} unparsed, {} not limited by any "
                                  "policy.</p>\n",
                                  s.lines, s.requests, s.denied_requests, share_text(s.denied_requests, s.requests),
                                  s.unparsed, s.unmatched);
    out += policy_table(s, id);
    out += delay_table(s, id);
    out += fmt::format("<h3>Tenants denied most</h3>\n<table id=\"{}-top\"><thead><tr><th>policy</th><th>tenant</th>"
                       "<th>denied</th><th>first denied</th></tr></thead><tbody>\n",
                       id);
    for (std::size_t i = 0; i < s.denials.size() && i < top; ++i) {
        const auto& d = s.denials[i];
        out += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>\n", html_escape(d.policy),
                           html_escape(d.tenant), d.denied, html_escape(format_rfc3339(d.first_denied_ms)));
    }
    out += "</tbody></table>\n";
    return out;
}

std::string pairs_table(const char* title, const char* id, const std::vector<PolicyTenant>& pairs) {
    std::string out = fmt::format("<details{}><summary>{} ({})</summary>\n<table id=\"{}\"><thead><tr><th>policy</th>"
                                  "<th>tenant</th></tr></thead><tbody>\n",
                                  pairs.size() <= 20 ? " open" : "", title, pairs.size(), id);
    for (const auto& p : pairs) {
        out += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", html_escape(p.policy), html_escape(p.tenant));
    }
    return out + "</tbody></table></details>\n";
}

// The answer a baseline run is for: per policy, denials before and after, and the tenants
// that change side; the pairs themselves under it.
std::string difference(const Report& r) {
    std::string out = fmt::format(
        "<h2>Difference from the baseline</h2>\n<p>Requests denied: {} &rarr; {} of {} (baseline <code>{}</code> "
        "&rarr; config <code>{}</code>).</p>\n<table id=\"difference\"><thead><tr><th>policy</th>"
        "<th>denied before</th><th>denied after</th><th>change</th><th>newly denied tenants</th>"
        "<th>no longer denied tenants</th></tr></thead><tbody>\n",
        r.baseline->denied_requests, r.config.denied_requests, r.config.requests, html_escape(r.baseline_name),
        html_escape(r.config_name));
    std::size_t quiet = 0;  // policies that denied nobody under either config: not listed
    for (const auto& d : r.difference) {
        if (d.denied_before == 0 && d.denied_after == 0) {
            ++quiet;
            continue;
        }
        const auto change = static_cast<std::int64_t>(d.denied_after) - static_cast<std::int64_t>(d.denied_before);
        out += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n {}\">{:+}</td>"
                           "<td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
                           html_escape(d.policy), d.denied_before, d.denied_after,
                           change > 0 ? "up" : (change < 0 ? "down" : "same"), change, d.newly_denied,
                           d.no_longer_denied);
    }
    out += "</tbody></table>\n";
    if (quiet > 0) {
        out += fmt::format("<p class=\"quiet\">{} more {} denied nobody under either config.</p>\n", quiet,
                           quiet == 1 ? "policy" : "policies");
    }
    out += pairs_table("Newly denied: denied by the config, never by the baseline", "newly-denied", r.newly_denied);
    out += pairs_table("No longer denied: denied by the baseline, never by the config", "no-longer-denied",
                       r.no_longer_denied);
    return out;
}

}  // namespace

std::string to_html(const Report& report) {
    std::string out =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        "<title>ratelimitd simulate</title>\n<style>\n";
    out += page_style;
    out += "\n</style></head><body>\n";
    out += fmt::format("<h1>ratelimitd simulate</h1>\n<p><code>{}</code> replayed against <code>{}</code>.</p>\n",
                       html_escape(report.log_name), html_escape(report.config_name));
    const Summary* baseline = report.baseline ? &*report.baseline : nullptr;
    if (baseline != nullptr) out += difference(report);
    out += "<h2>Requests per minute</h2>\n" + volume_chart(report.config);
    out += baseline != nullptr ? "<h2>Denials per minute: config and baseline</h2>\n" : "<h2>Denials per minute</h2>\n";
    out += denials_chart(report.config, baseline);
    out += "<h2>Config</h2>\n" + tables(report.config, report.top, "config");
    if (baseline != nullptr) {
        out += fmt::format("<h2>Baseline <code>{}</code></h2>\n", html_escape(report.baseline_name));
        out += tables(*baseline, report.top, "baseline");
    }
    out += "</body></html>\n";
    return out;
}

}  // namespace ratelimitd::simulate
