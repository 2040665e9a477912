// Which of door::Doors' entry points a door takes: the door table's rows (http/door.hpp)
// name theirs, so the table says which doors share the one road.
#pragma once

#include <string_view>

namespace ratelimitd::door {

/// A door's road. No enumerator is 0, so a row that forgot to choose is caught at compile
/// time (value-initialised) rather than defaulting to one.
enum class Road : unsigned char {
    own = 1,  ///< no road: the endpoint answers by itself (health, metrics, admin, status page)
    check,    ///< Doors::check_now, then Doors::decide_into
    auth,     ///< Doors::auth_now, then Doors::decide_into
    report,   ///< Doors::report_plan, then Doors::decide_into
    release,  ///< Doors::release
    rls,      ///< Doors::rls (gRPC's ShouldRateLimit)
};

/// True when `road` is one of Road's enumerators (a row that chose).
constexpr bool chose_road(Road road) noexcept {
    switch (road) {
    case Road::own:
    case Road::check:
    case Road::auth:
    case Road::report:
    case Road::release:
    case Road::rls: return true;
    }
    return false;
}

}  // namespace ratelimitd::door
