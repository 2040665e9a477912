// unknown_variable_warnings: ERL-looking names ERL mode does not read, and their likely intent.
#include "ratelimitd/erl/unknown_variables.hpp"

#include "ratelimitd/config/setting_table.hpp"
#include "ratelimitd/erl/erl_environment.hpp"
#include "ratelimitd/erl/erl_variables.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

namespace ratelimitd::erl {
namespace {

// The families of envoyproxy/ratelimit's settings.go and of the variables Envoy Gateway sets on
// its rate limit Deployment (OTEL_*): anything else in a pod's environment is someone else's.
constexpr std::array<std::string_view, 17> families{
    "RUNTIME_", "REDIS_", "GRPC_", "CONFIG_", "TRACING_", "OTEL_", "STATSD_", "PROMETHEUS_", "MEMCACHE_",
    "XDS_", "LIMIT_", "LOG_", "USE_", "CACHE_", "BACKEND_", "DEBUG_", "EXPIRATION_"};

bool looks_like_erl(std::string_view name) {
    return std::any_of(families.begin(), families.end(), [&](std::string_view f) { return name.starts_with(f); });
}

// The OpenTelemetry variables the settings table reads (OTEL_EXPORTER_OTLP_ENDPOINT, ...: the
// trace settings' aliases) are read in ERL mode too, as its Go SDK reads them.
bool is_setting_alias(std::string_view name) {
    const auto rows = config::setting_table();
    return std::any_of(rows.begin(), rows.end(), [&](const config::SettingRow& row) { return row.env_alias == name; });
}

bool is_known(std::string_view name) {
    return name == store_error_variable || find_erl_variable(name) != nullptr || is_setting_alias(name);
}

std::string without_underscores(std::string_view name) {
    std::string out;
    std::copy_if(name.begin(), name.end(), std::back_inserter(out), [](char c) { return c != '_'; });
    return out;
}

/// Levenshtein distance; the names are short (under 64 bytes), so one row of the table suffices.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// Two edits catch a dropped, doubled or swapped letter or underscore without pairing names
// that merely share a family (GRPC_PORT and GRPC_HOST are four apart).
constexpr std::size_t most_edits = 2;

}  // namespace

std::string closest_known_variable(std::string_view name) {
    std::string best;
    std::size_t best_distance = most_edits + 1;
    const std::string squeezed = without_underscores(name);
    for (const ErlVariable& row : erl_variables()) {
        if (without_underscores(row.name) == squeezed) return std::string(row.name);
        const std::size_t d = edit_distance(name, row.name);
        if (d < best_distance) {
            best_distance = d;
            best = std::string(row.name);
        }
    }
    return best;
}

std::vector<std::string> unknown_variable_warnings(const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const std::string& name : names) {
        if (!looks_like_erl(name) || is_known(name)) continue;
        std::string line = name + " is not read in ERL mode";
        if (const std::string known = closest_known_variable(name); !known.empty()) {
            line += "; did you mean " + known + "?";
        }
        out.push_back(std::move(line));
    }
    return out;
}

}  // namespace ratelimitd::erl
