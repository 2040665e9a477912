// Fuzz target: the store URLs of the config and the environment (redis://, redis-sentinel://,
// redis-cluster://), which carry passwords. Each parser refuses bad text with a Problem; the
// describe() of what it accepts is for logs and so never carries a credential ('@').
#include "ratelimitd/core/percent.hpp"
#include "ratelimitd/store/redis/cluster/cluster_endpoint.hpp"
#include "ratelimitd/store/redis/endpoint.hpp"
#include "ratelimitd/store/redis/sentinel.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void no_credential(const std::string& described) {
    if (described.find('@') != std::string::npos) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace ratelimitd::store::redis;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // The fuzzer finds the schemes through the dictionary; try each parser on every input too.
    for (const std::string_view scheme : {"", "redis://", "redis-sentinel://", "redis-cluster://", "rediss://"}) {
        const std::string url = std::string(scheme) + std::string(text);
        if (const auto e = parse_redis_url(url)) {
            no_credential(e->describe());
            if (e->port < 0 || e->port > 65535 || e->db < 0) std::abort();
        }
        if (const auto s = parse_sentinel_url(url)) {
            no_credential(s->describe());
            if (s->sentinels.empty() || s->master_name.empty()) std::abort();
        }
        if (const auto c = cluster::parse_cluster_url(url)) {
            no_credential(c->describe());
            if (c->seeds.empty()) std::abort();
        }
    }
    (void)ratelimitd::percent_decode(text);
    return 0;
}
