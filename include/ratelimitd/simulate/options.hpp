// `ratelimitd simulate`'s command line.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/simulate/json_format.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ratelimitd::simulate {

enum class LogFormat { nginx, json };

struct Options {
    std::string config;
    std::string log;                           ///< "-": stdin
    LogFormat format = LogFormat::nginx;
    std::optional<std::string> nginx_format;   ///< a log_format; default: combined
    JsonFields json;
    bool tenant_header_given = false;          ///< --tenant-header (else the config's first header source)
    std::optional<std::string> baseline;
    bool json_output = false;
    std::optional<std::string> html;
    std::size_t top = 10;
    std::int64_t tolerance_ms = 5'000;         ///< --out-of-order
    bool progress = true;                      ///< --quiet turns the progress line off
    bool help = false;
};

/// Parses the arguments after `simulate`. Problems name the flag.
result<Options> parse_options(int argc, const char* const* argv);

/// The usage text of `ratelimitd simulate`.
const char* simulate_usage();

}  // namespace ratelimitd::simulate
