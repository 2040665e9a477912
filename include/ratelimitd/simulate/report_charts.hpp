// The HTML report's two charts, inline SVG drawn here (the page runs no script): each minute
// a hover title with its figures, round time labels on the x axis, a legend under it.
#pragma once

#include "ratelimitd/simulate/tally.hpp"

#include <string>

namespace ratelimitd::simulate {

/// Requests per minute as bars (svg#volume), the part the verdict denied stacked in red on the
/// admitted part; each minute's title gives its requests, denied and the denied share.
std::string volume_chart(const Summary& s);

/// Denials per minute, one line per policy that denied (svg#chart, polyline.series with
/// data-policy and data-config): the config's solid, the baseline's (when given) dashed in the
/// same colour, both on one y scale so the two can be compared by eye.
std::string denials_chart(const Summary& config, const Summary* baseline);

}  // namespace ratelimitd::simulate
