// Parsing redis-cluster:// URLs: each seed goes through the redis:// parser with the shared credentials.
#include "ratelimitd/store/redis/cluster/cluster_endpoint.hpp"

namespace ratelimitd::store::redis::cluster {

namespace {

constexpr std::string_view scheme = "redis-cluster://";
constexpr std::string_view tls_scheme = "rediss-cluster://";  // TLS to every node

Problem bad(std::string why) {
    return Problem{errc::invalid_request,
                   "redis: not a valid redis-cluster://[[user]:password@]host:port[,host:port...] URL: " + why};
}

}  // namespace

bool is_cluster_url(std::string_view url) noexcept {
    return url.substr(0, scheme.size()) == scheme || url.substr(0, tls_scheme.size()) == tls_scheme;
}

std::string ClusterEndpoint::describe() const {
    std::string out(!seeds.empty() && seeds.front().tls ? tls_scheme : scheme);
    for (size_t i = 0; i < seeds.size(); ++i) {
        if (i) out += ',';
        const auto& s = seeds[i];
        const bool v6 = s.host.find(':') != std::string::npos;
        out += (v6 ? "[" + s.host + "]" : s.host) + ":" + std::to_string(s.port);
    }
    return out;
}

result<ClusterEndpoint> parse_cluster_url(std::string_view url) {
    if (!is_cluster_url(url)) return bad("expected it to start with redis-cluster://");
    const bool tls = url.substr(0, tls_scheme.size()) == tls_scheme;
    std::string_view rest = url.substr(tls ? tls_scheme.size() : scheme.size());
    std::string_view userinfo;
    if (auto at = rest.rfind('@'); at != std::string_view::npos) {
        userinfo = rest.substr(0, at + 1);  // with the '@'
        rest = rest.substr(at + 1);
    }
    std::string_view db;
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        db = rest.substr(slash + 1);
        rest = rest.substr(0, slash);
        if (!db.empty() && db != "0") return bad("Redis Cluster has only database 0");
    }
    ClusterEndpoint out;
    while (true) {
        const auto comma = rest.find(',');
        const std::string_view seed = rest.substr(0, comma);
        if (seed.empty()) return bad("empty host in the list of seeds");
        auto ep = parse_redis_url((tls ? "rediss://" : "redis://") + std::string(userinfo) + std::string(seed));
        if (!ep) {
            // The redis:// parser's message names the problem; keep its reason, not its scheme.
            const auto& d = ep.error().detail;
            const auto colon = d.find(": ", d.find("URL"));
            return bad(colon == std::string::npos ? d : d.substr(colon + 2));
        }
        out.seeds.push_back(std::move(*ep));
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
    }
    return out;
}

}  // namespace ratelimitd::store::redis::cluster
