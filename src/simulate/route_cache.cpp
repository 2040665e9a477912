// RouteCache: match_route behind a map from "METHOD path" to the route it found.
#include "ratelimitd/simulate/route_cache.hpp"

#include "ratelimitd/policy/path.hpp"
#include "ratelimitd/policy/resolve.hpp"

namespace ratelimitd::simulate {

const policy::Route* RouteCache::match(std::string_view method, std::string_view uri) {
    // Only an origin-form target ("/path?query") is cut at its query: an absolute one
    // ("http://host/path") is read by match_route as it is, and not remembered.
    if (uri.empty() || uri.front() != '/') return policy::match_route(registry_, method, uri);
    std::size_t path_end = 0;  // up to '?' or '#' (find_first_of would call memchr per byte)
    while (path_end < uri.size() && uri[path_end] != '?' && uri[path_end] != '#') ++path_end;
    const std::string_view path = uri.substr(0, path_end);
    if (direct_ && policy::is_normal_path(path)) return policy::match_normal_route(registry_, method, path);
    key_.assign(method).append(" ").append(path);
    if (const auto it = routes_.find(std::string_view(key_)); it != routes_.end()) return it->second;
    const policy::Route* route = policy::match_route(registry_, method, path);
    if (routes_.size() < capacity_) routes_.emplace(key_, route);
    return route;
}

}  // namespace ratelimitd::simulate
