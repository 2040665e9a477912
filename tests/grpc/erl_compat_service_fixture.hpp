// The limits envoyproxy/ratelimit's service tests (test/service/ratelimit_test.go) hand their
// mocked config, as ERL config files, served in ERL mode: where its mocked cache answers a
// descriptor OVER_LIMIT, the call here spends more than the limit in one hits_addend, so every
// answer it asserts is decided by the real binary against a real redis-server.
#pragma once

#include "grpc/erl_mode_fixture.hpp"

#include <cstdint>
#include <fstream>
#include <map>
#include <string>

namespace ratelimitd::test {

class ErlCompatServiceTest : public ErlModeTest {
protected:
    /// Writes the domains its tests use, one file each, as ERL loads them.
    void write_domains() {
        write("different.yaml",
              "domain: different-domain\ndescriptors:\n"
              "  - {key: foo, value: bar, rate_limit: {unit: minute, requests_per_unit: 10}}\n");
        write("shadow.yaml",
              "domain: shadow-domain\ndescriptors:\n"
              "  - {key: foo, value: bar, shadow_mode: true, rate_limit: {unit: minute, requests_per_unit: 10}}\n"
              "  - {key: hello, value: world, shadow_mode: true, rate_limit: {unit: minute, requests_per_unit: 10}}\n");
        write("mixed.yaml",
              "domain: mixed-shadow-domain\ndescriptors:\n"
              "  - {key: foo, value: bar, shadow_mode: true, rate_limit: {unit: minute, requests_per_unit: 10}}\n"
              "  - {key: hello, value: world, rate_limit: {unit: minute, requests_per_unit: 10}}\n");
        write("some.yaml",
              "domain: some-domain\ndescriptors:\n"
              "  - {key: foo, value: bar, rate_limit: {unit: minute, requests_per_unit: 10}}\n"
              "  - {key: baz, value: qux, rate_limit: {unlimited: true}}\n");
        write("quota.yaml",
              "domain: quota-domain\ndescriptors:\n"
              "  - {key: regular, value: limit, rate_limit: {unit: minute, requests_per_unit: 5}}\n"
              "  - {key: quota, value: limit, quota_mode: true, rate_limit: {unit: minute, requests_per_unit: 3}}\n"
              "  - {key: quota2, value: limit, quota_mode: true, rate_limit: {unit: minute, requests_per_unit: 3}}\n");
    }
    void write(const std::string& name, const std::string& text) { std::ofstream(config_dir() / name) << text; }
    void serve_domains() {
        write_domains();
        serve();
    }
    /// One call from empty counters.
    RlsResponse fresh_call(const std::string& domain, const std::vector<ErlEntries>& descriptors,
                           const std::vector<std::uint64_t>& hits) {
        fresh_counters();
        return call(domain, descriptors, hits);
    }
    /// The response headers of the over-limit call of its header tests ({foo=bar, 11 hits},
    /// {hello=world}), answered within one second (at_), whose reset it is.
    std::map<std::string, std::string> headers_of_over_call() {
        std::map<std::string, std::string> headers;
        for (int attempt = 0; attempt < 5; ++attempt) {
            headers.clear();
            at_ = epoch_seconds();
            const RlsResponse res = fresh_call("different-domain", {{{"foo", "bar"}}, {{"hello", "world"}}}, {11, 1});
            EXPECT_EQ(codes(res), "OVER_LIMIT: OVER_LIMIT OK");
            for (const auto& h : res.response_headers_to_add()) headers[h.key()] = h.value();
            if (epoch_seconds() == at_) break;
        }
        return headers;
    }
    /// Its reset header then: the seconds to the minute's end.
    std::string reset_now() const { return std::to_string(60 - at_ % 60); }

    /// The codes of a response: overall, then each descriptor's ("OVER_LIMIT: OK OVER_LIMIT").
    static std::string codes(const RlsResponse& res) {
        std::string out = RlsResponse::Code_Name(res.overall_code()) + ":";
        for (const auto& s : res.statuses()) out += " " + RlsResponse::Code_Name(s.code());
        return out;
    }

    std::int64_t at_ = 0;
};

inline const ErlEntries foo_bar{{"foo", "bar"}};
inline const ErlEntries hello_world{{"hello", "world"}};
inline const ErlEntries regular{{"regular", "limit"}};
inline const ErlEntries quota{{"quota", "limit"}};
inline const ErlEntries quota2{{"quota2", "limit"}};

}  // namespace ratelimitd::test
