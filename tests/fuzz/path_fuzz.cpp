// Fuzz target: normalize_path and route matching over attacker-chosen request targets. Checks
// the invariants route matching relies on, so no spelling of a path can miss its route.
#include "ratelimitd/policy/path.hpp"
#include "ratelimitd/policy/resolve.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace ratelimitd::policy;

namespace {

/// The normal form: starts with '/', no "//", no "." or ".." segment, no ';', and every '%'
/// starts an upper-case escape of a byte that is never written as itself.
bool is_normal_form(std::string_view p) {
    if (p.empty() || p.front() != '/') return false;
    if (p.find("//") != std::string_view::npos || p.find_first_of(";?#") != std::string_view::npos) return false;
    for (std::size_t pos = 1; pos <= p.size();) {
        const auto slash = p.find('/', pos);
        const auto seg = p.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
        if (seg == "." || seg == "..") return false;
        if (slash == std::string_view::npos) break;
        pos = slash + 1;
    }
    for (std::size_t i = 0; i < p.size(); ++i) {
        const auto c = static_cast<unsigned char>(p[i]);
        if (c <= 0x20 || c >= 0x7f || c == '\\') return false;  // written %XX
        if (c != '%') continue;
        if (i + 2 >= p.size()) return false;
        for (const char h : {p[i + 1], p[i + 2]}) {
            if (!((h >= '0' && h <= '9') || (h >= 'A' && h <= 'F'))) return false;
        }
    }
    return true;
}

const Registry& registry() {
    static const Registry reg = [] {
        Registry r;
        Route login;
        login.path = "/login";
        login.policy = "login";
        Route folded = login;
        folded.path = "/admin/*";
        folded.case_insensitive = true;
        r.routes = {login, folded};
        return r;
    }();
    return reg;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view uri(reinterpret_cast<const char*>(data), size);
    const std::string once = normalize_path(uri);
    if (!is_normal_form(once)) std::abort();
    if (normalize_path(once) != once) std::abort();  // idempotent
    // A target whose normal form meets a (limited) route meets that route, however spelled;
    // one whose normal form meets none may meet a route only through its path as sent.
    const Registry& reg = registry();
    const Route* by_normal = match_route(reg, "GET", once);
    const Route* by_target = match_route(reg, "GET", uri);
    if (by_normal != nullptr && by_target != by_normal) std::abort();
    if (by_normal == nullptr && by_target != nullptr && by_target != match_route(reg, "GET", path_as_sent(uri))) {
        std::abort();
    }
    if (path_as_sent(path_as_sent(uri)) != path_as_sent(uri)) std::abort();
    // A normal path below "/login" or "/admin" keeps its route when spelled with extra junk.
    if (once == "/login" || once == "/login/") {
        if (match_route(reg, "GET", "/x/.." + once + ";p") != &reg.routes[0]) std::abort();
    }
    return 0;
}
