// Which call of the road (road::Road::decide) a door's handler makes: the door table's rows
// (road/door.hpp) name theirs, so the table says which doors spend or free units on it.
#pragma once

namespace ratelimitd::road {

/// A door's way onto the road. No enumerator is 0, so a row that forgot to choose is caught at
/// compile time (value-initialised) rather than defaulting to one. The admin doors that read or
/// forget state (peek, reset, their Envoy forms) take the road too (Ask::peek, Ask::reset...),
/// but spend nothing: their rows say `own`, as the rows of every door that spends nothing do.
enum class Way : unsigned char {
    own = 1,  ///< spends and frees nothing (health, metrics, admin, status page)
    check,    ///< Ask::check
    auth,     ///< Ask::auth
    report,   ///< Ask::report
    release,  ///< Ask::release
    rls,      ///< Ask::rls (gRPC's ShouldRateLimit, POST /json)
};

/// True when `way` is one of Way's enumerators (a row that chose).
constexpr bool chose_way(Way way) noexcept {
    switch (way) {
    case Way::own:
    case Way::check:
    case Way::auth:
    case Way::report:
    case Way::release:
    case Way::rls: return true;
    }
    return false;
}

}  // namespace ratelimitd::road
