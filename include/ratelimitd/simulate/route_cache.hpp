// The route of each (method, path) a replay has seen: a log repeats a few paths millions of
// times, and matching one normalises it (decoding, dot-segments) and walks the routes.
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <boost/unordered/unordered_flat_map.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace ratelimitd::simulate {

/// policy::match_route of one registry, remembered by method and path. The query is no part
/// of a match (both readings of the path match_route tries stop at '?' or '#'), so
/// "/v1/items?page=2" and "/v1/items?page=3" are one entry. Bounded: past `capacity` paths,
/// new ones are matched each time and not remembered. A path already in normal form
/// (policy::is_normal_path) is matched as it is, with no copy, when the registry has at most
/// `direct_routes` routes: a walk of a handful of routes costs less than a lookup, and a log of
/// many distinct paths ("/v1/items/N") would miss the cache on nearly every line.
/// Single-threaded.
class RouteCache {
public:
    explicit RouteCache(const policy::Registry& registry, std::size_t capacity = 65'536,
                        std::size_t direct_routes = 8)
        : registry_(registry), capacity_(capacity), direct_(registry.routes.size() <= direct_routes) {}

    /// What match_route(registry, method, uri) answers.
    const policy::Route* match(std::string_view method, std::string_view uri);

    /// Paths remembered.
    [[nodiscard]] std::size_t size() const noexcept { return routes_.size(); }

private:
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    struct Equal {
        using is_transparent = void;
        bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
    };

    const policy::Registry& registry_;
    std::size_t capacity_;
    bool direct_;  ///< few routes: normal paths are matched, not looked up
    boost::unordered_flat_map<std::string, const policy::Route*, Hash, Equal> routes_;
    std::string key_;  ///< "METHOD path" of the line at hand (reused: no allocation per line)
};

}  // namespace ratelimitd::simulate
