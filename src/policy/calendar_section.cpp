// `align: calendar` and `utc_offset:` of a policy (or of one window of it): windows aligned
// to the calendar, for the algorithms whose windows may be (AlgorithmTraits::aligned).
#include "ratelimitd/policy/calendar_section.hpp"

#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/calendar.hpp"

#include <chrono>

namespace ratelimitd::policy {
namespace {

constexpr std::int64_t day_ms = 86'400'000;

// The nominal length of a period (IETF `w`, the span check of multi-window policies): the
// calendar itself decides where each period ends.
std::chrono::milliseconds nominal_length(CalendarUnit u) {
    switch (u) {
    case CalendarUnit::minute: return std::chrono::minutes(1);
    case CalendarUnit::hour: return std::chrono::hours(1);
    case CalendarUnit::day: return std::chrono::milliseconds(day_ms);
    case CalendarUnit::week: return std::chrono::milliseconds(7 * day_ms);
    case CalendarUnit::month: return std::chrono::milliseconds(30 * day_ms);
    case CalendarUnit::year: return std::chrono::milliseconds(365 * day_ms);
    }
    return std::chrono::minutes(1);
}

}  // namespace

void read_alignment(const SchemaChecks& in, const ConfigTree& body, const std::string& path, Policy& p) {
    if (const ConfigTree* v = SchemaChecks::find(body, "align")) {
        const std::string align_path = join(path, "align");
        const bool calendar = in.need_one_of(*v, align_path, {"calendar", "rolling"}) == "calendar";
        if (calendar && !traits(p.algorithm).aligned) {
            in.fail(align_path, "align: calendar is only for algorithm " +
                                 algorithm_names_or([](const AlgorithmTraits& t) { return t.aligned; }) +
                                 ", this policy uses " + to_string(p.algorithm));
        }
        // The unit comes with `window:`; minute until then.
        p.calendar = calendar ? std::optional<CalendarUnit>(CalendarUnit::minute) : std::nullopt;
        if (!calendar) p.utc_offset_minutes = 0;
    }
    if (const ConfigTree* v = SchemaChecks::find(body, "utc_offset")) {
        const std::string offset_path = join(path, "utc_offset");
        const std::string expected = "a fixed offset such as \"+02:00\" or \"-05:30\" (at most 14:00; time zone "
                                     "names are not supported)";
        if (!p.calendar) in.fail(offset_path, "only allowed with align: calendar");
        const auto minutes = parse_utc_offset(in.need_string(*v, offset_path, expected));
        if (!minutes) in.fail(offset_path, "expected " + expected + ", got " + config::describe(*v));
        p.utc_offset_minutes = *minutes;
    }
}

void read_calendar_window(const SchemaChecks& in, const ConfigTree& window, const std::string& window_path,
                          Policy& p) {
    const std::string expected = "one of 1m, 1h, 1d, 1w, 1mo, 1y with align: calendar";
    const auto unit = calendar_unit_named(in.need_string(window, window_path, expected));
    if (!unit) in.fail(window_path, "expected " + expected + ", got " + config::describe(window));
    p.calendar = *unit;
    p.window = nominal_length(*unit);
}

}  // namespace ratelimitd::policy
