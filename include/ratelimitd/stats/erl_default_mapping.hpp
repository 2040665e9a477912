// envoyproxy/ratelimit's default statsd_exporter mapping as mapping-file text: what
// StatsdMapper::erl_default parses once (its PROMETHEUS_MAPPER_YAML unset).
#pragma once

#include <string>

namespace ratelimitd::stats {

/// The mapping file's text, built from envoyproxy/ratelimit's published series and labels.
std::string erl_default_mapping_yaml();

}  // namespace ratelimitd::stats
