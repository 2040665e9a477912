// Fuzz target: the Envoy descriptor config reader and the matcher/planner behind it. The input
// is a registry text (`domains:` in YAML), a NUL, then a call: the domain on the first line,
// then descriptors split by 0x1E, entries by 0x1F, key and value by the first '='.
// ConfigError and Problems are the expected refusals; the oracle checks every plan's shape.
#include "ratelimitd/check/check_request.hpp"
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/rls_plan.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

using namespace ratelimitd::policy;

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    for (std::size_t at = 0;;) {
        const std::size_t end = s.find(sep, at);
        out.push_back(s.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
        if (end == std::string_view::npos) return out;
        at = end + 1;
    }
}

RlsRequest read_call(std::string_view bytes) {
    RlsRequest req;
    const std::size_t nl = bytes.find('\n');
    req.domain = std::string(bytes.substr(0, nl));
    if (nl == std::string_view::npos) return req;
    for (const auto d : split(bytes.substr(nl + 1), '\x1e')) {
        RlsDescriptor desc;
        for (const auto e : split(d, '\x1f')) {
            const std::size_t eq = e.find('=');
            desc.entries.push_back(RlsEntry{std::string(e.substr(0, eq)),
                                            eq == std::string_view::npos ? "" : std::string(e.substr(eq + 1))});
        }
        if (!desc.entries.empty() && desc.entries.front().key == "+") desc.hits_addend = d.size();
        req.descriptors.push_back(std::move(desc));
    }
    return req;
}

/// What every plan must be: each limited descriptor points at a limit, each key is free of
/// raw control bytes and hash-tag braces, each cost is one some limit can admit.
void check_plan(const RlsPlan& p, const RlsRequest& req) {
    if (p.descriptors.size() != req.descriptors.size()) std::abort();
    for (const auto& d : p.descriptors) {
        if (d.kind == RlsDescriptorPlan::Kind::limited && d.limit >= p.check.limits.size()) std::abort();
    }
    for (std::size_t i = 0; i < p.check.limits.size(); ++i) {
        const auto& l = p.check.limits[i];
        if (l.windows.size() != 1 || l.cost == 0 || l.cost > ratelimitd::check::max_cost) std::abort();
        if (l.policy->limit != 0 && static_cast<std::int64_t>(l.cost) > l.policy->max_cost()) std::abort();
        for (const unsigned char c : l.windows[0].key) {
            if (c < 0x21 || c > 0x7E || c == '{' || c == '}') std::abort();
        }
        for (std::size_t j = 0; j < i; ++j) {
            if (p.check.limits[j].windows[0].key == l.windows[0].key) std::abort();  // deduplicated
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::size_t nul = input.find('\0');
    std::shared_ptr<const Registry> reg;
    try {
        reg = std::make_shared<const Registry>(parse_config(input.substr(0, nul), "fuzz.yaml").registry);
    } catch (const ConfigError&) {
        return 0;  // refused with a message: fine
    }
    if (nul == std::string_view::npos) return 0;
    const RlsRequest req = read_call(input.substr(nul + 1));
    const auto planned = plan(reg, req, std::chrono::system_clock::time_point(std::chrono::seconds(1764592496)));
    if (planned) check_plan(*planned, req);
    return 0;
}
