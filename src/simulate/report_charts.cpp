// The charts share one frame: a fixed viewBox scaled to the page's width by CSS, minutes laid
// out as equal columns from the log's first minute to its last (minutes without requests stay
// empty columns, so time reads linearly), a y axis from 0 to a round maximum.
#include "ratelimitd/simulate/report_charts.hpp"

#include "ratelimitd/simulate/html_text.hpp"
#include "ratelimitd/simulate/log_time.hpp"
#include "ratelimitd/simulate/share_text.hpp"
#include "ratelimitd/simulate/time_ticks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace ratelimitd::simulate {
namespace {

constexpr const char* palette[] = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr std::int64_t column_ms = 60'000;
constexpr std::size_t most_time_labels = 8;

// 1, 2 or 5 times a power of ten, at least `n` (and at least 1).
std::uint64_t round_max(std::uint64_t n) {
    std::uint64_t scale = 1;
    while (true) {
        for (const std::uint64_t f : {1, 2, 5}) {
            if (f * scale >= n) return f * scale;
        }
        scale *= 10;
    }
}

std::string hh_mm(std::int64_t t) { return format_rfc3339(t).substr(11, 5); }

/// The frame: x by minute column, y by count, the axes with their labels.
class Frame {
public:
    Frame(const Summary& s, std::uint64_t peak) : top_value_(round_max(peak)) {
        first_ = s.per_minute.front().minute_ms;
        last_ = s.per_minute.back().minute_ms;
    }
    static constexpr double width = 900, height = 280, left = 60, right = 14, top = 14, bottom = 46;

    [[nodiscard]] double x(std::int64_t t) const {
        const double columns = static_cast<double>((last_ - first_) / column_ms + 1);
        return left + (width - left - right) * static_cast<double>(t - first_) / (columns * column_ms);
    }
    [[nodiscard]] double column_width() const { return x(first_ + column_ms) - x(first_); }
    [[nodiscard]] double y(std::uint64_t n) const {
        return top + (height - top - bottom) * (1.0 - static_cast<double>(n) / static_cast<double>(top_value_));
    }
    [[nodiscard]] std::string open(const char* id, const char* label) const;

private:
    std::uint64_t top_value_;
    std::int64_t first_ = 0;
    std::int64_t last_ = 0;
};

std::string Frame::open(const char* id, const char* label) const {
    std::string out = fmt::format(
        "<svg id=\"{}\" class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n", id, width, height,
        label);
    for (const std::uint64_t v : {std::uint64_t{0}, top_value_ / 2, top_value_}) {
        out += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>"
                           "<text class=\"y-label\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                           left, y(v), width - right, y(v), left - 6, y(v) + 4, v);
    }
    for (const TimeTick& tick : time_ticks(first_, last_, most_time_labels)) {
        const double at = x(tick.at_ms);
        out += fmt::format("<line class=\"tick\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
                           "<text class=\"x-label\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                           at, height - bottom, height - bottom + 5, height - bottom + 24, html_escape(tick.label));
    }
    out += fmt::format("<text class=\"caption\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">UTC, from {}</text>\n",
                       (left + width - right) / 2, height - 8, html_escape(format_rfc3339(first_)));
    return out;
}


std::string minute_title(const MinuteTotals& m) {
    std::string out = fmt::format("{} UTC: {} requests, {} denied ({})", hh_mm(m.minute_ms), m.requests,
                                  m.denied_requests, share_text(m.denied_requests, m.requests));
    for (const auto& [policy, n] : m.denied) out += fmt::format("; {} denied {}", policy, n);
    return html_escape(out);
}

}  // namespace

std::string volume_chart(const Summary& s) {
    if (s.per_minute.empty()) return "<p class=\"none\">No request was read.</p>\n";
    std::uint64_t peak = 0;
    for (const auto& m : s.per_minute) peak = std::max(peak, m.requests);
    const Frame f(s, peak);
    std::string out = f.open("volume", "requests per minute, the denied share stacked on top");
    const double w = std::max(1.0, f.column_width() - 1.0);
    for (const auto& m : s.per_minute) {
        const double x = f.x(m.minute_ms);
        const std::uint64_t admitted = m.requests - std::min(m.requests, m.denied_requests);
        out += fmt::format("<g class=\"minute\"><title>{}</title>"
                           "<rect class=\"admitted\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>"
                           "<rect class=\"denied\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/></g>\n",
                           minute_title(m), x, f.y(admitted), w, f.y(0) - f.y(admitted), x, f.y(m.requests), w,
                           f.y(admitted) - f.y(m.requests));
    }
    out += "</svg>\n<p class=\"legend\"><span class=\"swatch admitted\"></span> admitted "
           "<span class=\"swatch denied\"></span> denied (hover a minute for its figures)</p>\n";
    return out;
}

namespace {

using MinuteDenials = std::map<std::int64_t, std::uint64_t>;  // minute -> denials

void collect(const Summary& s, std::map<std::string, MinuteDenials>& by_policy, std::uint64_t& peak) {
    for (const auto& m : s.per_minute) {
        for (const auto& [policy, n] : m.denied) {
            by_policy[policy][m.minute_ms] = n;
            peak = std::max(peak, n);
        }
    }
}

std::string series(const Frame& f, const Summary& minutes, const std::string& policy, const MinuteDenials& counts,
                   const char* config, const char* colour) {
    std::string points;
    std::string marks;
    for (const auto& m : minutes.per_minute) {
        const auto it = counts.find(m.minute_ms);
        const std::uint64_t n = it == counts.end() ? 0 : it->second;
        const double x = f.x(m.minute_ms) + f.column_width() / 2;
        points += fmt::format("{:.1f},{:.1f} ", x, f.y(n));
        marks += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{} UTC, {} ({}): {} denied"
                             "</title></circle>",
                             x, f.y(n), colour, hh_mm(m.minute_ms), html_escape(policy), config, n);
    }
    return fmt::format("<polyline class=\"series {0}\" data-policy=\"{1}\" data-config=\"{0}\" fill=\"none\" "
                       "stroke=\"{2}\" points=\"{3}\"><title>{1} ({0})</title></polyline>\n<g class=\"marks\">{4}</g>\n",
                       config, html_escape(policy), colour, points, marks);
}

}  // namespace

std::string denials_chart(const Summary& config, const Summary* baseline) {
    std::map<std::string, MinuteDenials> now;
    std::map<std::string, MinuteDenials> before;
    std::uint64_t peak = 0;
    collect(config, now, peak);
    if (baseline != nullptr) collect(*baseline, before, peak);
    if ((now.empty() && before.empty()) || config.per_minute.empty()) {
        return "<p class=\"none\">No request was denied.</p>\n";
    }
    std::set<std::string> policies;
    for (const auto& [p, c] : now) policies.insert(p);
    for (const auto& [p, c] : before) policies.insert(p);
    const Frame f(config, peak);
    std::string out = f.open("chart", "denials per minute per policy");
    std::string legend = "<p class=\"legend\">";
    std::size_t colour = 0;
    for (const auto& policy : policies) {
        const char* c = palette[colour++ % std::size(palette)];
        if (const auto it = before.find(policy); it != before.end()) out += series(f, config, policy, it->second, "baseline", c);
        if (const auto it = now.find(policy); it != now.end()) out += series(f, config, policy, it->second, "config", c);
        legend += fmt::format("<span class=\"swatch\" style=\"background:{}\"></span> {} ", c, html_escape(policy));
    }
    if (baseline != nullptr) legend += "&mdash; solid: the config, dashed: the baseline";
    return out + "</svg>\n" + legend + "</p>\n";
}

}  // namespace ratelimitd::simulate
