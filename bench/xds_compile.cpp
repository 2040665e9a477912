// xds_compile_bench: the time from a control plane's message to rules in force, without the
// network: a DiscoveryResponse of N descriptors is decoded and compiled (decode_domains), laid
// into a copy of the registry, swapped in (RegistryHandle::replace) and audited (the envoy
// limits compared and digested, as an xDS audit entry does). With --file, a config file of N
// policies is parsed and validated instead (the file reload's load_config). bench/xds_compile.sh
// runs it over sizes and rounds and reports medians.
//   xds_compile_bench N            one xDS message of N descriptors
//   xds_compile_bench N --flat     the same, every descriptor at the top level of one domain
//   xds_compile_bench N --file     one config file of N policies
// Prints one line: kind=xds|xds-flat|file size=N decode_ms=.. swap_ms=.. total_ms=..
#include "ratelimitd/audit/config_changes.hpp"
#include "ratelimitd/policy/registry_handle.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/xds/ads_state.hpp"
#include "ratelimitd/xds/config_decoder.hpp"

#include <ratelimit/config/ratelimit/v3/rls_conf.pb.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

using namespace ratelimitd;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// N descriptors in domains of at most 10k (`flat`: one domain, every descriptor at its top
// level): each a tenant (exact value) with two nested paths, the shape a per-tenant control
// plane sends.
envoy::service::discovery::v3::DiscoveryResponse make_response(std::size_t n, bool flat) {
    const std::size_t per_domain = flat ? n : 10'000;
    const std::size_t children = flat ? 0 : 2;
    using ratelimit::config::ratelimit::v3::RateLimitConfig;
    envoy::service::discovery::v3::DiscoveryResponse r;
    r.set_version_info("bench");
    r.set_type_url(xds::rate_limit_config_type_url);
    std::size_t made = 0;
    for (int d = 0; made < n; ++d) {
        RateLimitConfig c;
        c.set_name("d" + std::to_string(d));
        c.set_domain("domain-" + std::to_string(d));
        for (std::size_t in_domain = 0; made < n && in_domain < per_domain; in_domain += 1 + children) {
            auto* tenant = c.add_descriptors();
            tenant->set_key("tenant");
            tenant->set_value("t" + std::to_string(made));
            tenant->mutable_rate_limit()->set_unit(ratelimit::config::ratelimit::v3::MINUTE);
            tenant->mutable_rate_limit()->set_requests_per_unit(100 + static_cast<std::uint32_t>(made % 1000));
            ++made;
            for (const char* path : {"/a", "/b"}) {
                if (made >= n || children == 0) break;
                auto* child = tenant->add_descriptors();
                child->set_key("path");
                child->set_value(path);
                child->mutable_rate_limit()->set_unit(ratelimit::config::ratelimit::v3::SECOND);
                child->mutable_rate_limit()->set_requests_per_unit(10);
                ++made;
            }
        }
        r.add_resources()->PackFrom(c);
    }
    return r;
}

int run_xds(std::size_t n, bool flat) {
    const auto response = make_response(n, flat);
    policy::RegistryHandle handle(std::make_shared<const policy::Registry>());
    const auto start = Clock::now();
    auto domains = xds::decode_domains(response);
    if (!domains) {
        std::fprintf(stderr, "refused: %s\n", domains.error().detail.c_str());
        return 1;
    }
    const double decode_ms = ms_since(start);
    const auto swap_start = Clock::now();
    auto next = std::make_shared<policy::Registry>(*handle.current());
    next->domains = *domains;
    const auto before = handle.current();
    handle.replace(next);
    const auto now = audit::envoy_limits(*next);
    const auto changes = audit::limit_changes(audit::envoy_limits(*before), now);
    const auto digest = audit::limits_digest(now);
    const double swap_ms = ms_since(swap_start);
    std::printf("kind=%s size=%zu decode_ms=%.1f swap_ms=%.1f total_ms=%.1f changes=%zu digest=%.15s\n", flat ? "xds-flat" : "xds", n, decode_ms, swap_ms,
                ms_since(start), changes.size(), digest.c_str());
    return 0;
}

int run_file(std::size_t n) {
    std::string text = "prefix: rl\npolicies:\n";
    for (std::size_t i = 0; i < n; ++i) {
        text += "  p" + std::to_string(i) + ": {algorithm: fixed_window, limit: " + std::to_string(1 + i % 500) +
                ", window: 1m}\n";
    }
    const auto start = Clock::now();
    auto config = policy::parse_config(text, "bench.yaml");
    const double decode_ms = ms_since(start);
    const auto swap_start = Clock::now();
    policy::RegistryHandle handle(std::make_shared<const policy::Registry>());
    handle.replace(std::make_shared<const policy::Registry>(std::move(config.registry)));
    const double swap_ms = ms_since(swap_start);
    std::printf("kind=file size=%zu decode_ms=%.1f swap_ms=%.1f total_ms=%.1f\n", n, decode_ms, swap_ms,
                ms_since(start));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: xds_compile_bench N [--file | --flat]\n");
        return 2;
    }
    const auto n = static_cast<std::size_t>(std::strtoull(argv[1], nullptr, 10));
    const std::string mode = argc > 2 ? argv[2] : "";
    return mode == "--file" ? run_file(n) : run_xds(n, mode == "--flat");
}
