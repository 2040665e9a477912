// Fuzz target: the registry loader on YAML and JSON text. ConfigError is the expected way to
// refuse input; any other exception, crash or sanitizer report is a finding.
#include "ratelimitd/policy/registry_loader.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const char* name : {"fuzz.yaml", "fuzz.json"}) {
        try {
            (void)ratelimitd::policy::parse_config(text, name);
        } catch (const ratelimitd::policy::ConfigError&) {
            // refused with a message: fine
        }
    }
    return 0;
}
