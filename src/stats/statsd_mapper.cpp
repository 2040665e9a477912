// StatsdMapper: a mapping file read with yaml-cpp, every key it does not implement refused by
// name, so a file meant for statsd_exporter never maps silently otherwise.
#include "ratelimitd/stats/statsd_mapper.hpp"
#include "ratelimitd/stats/erl_default_mapping.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

namespace ratelimitd::stats {

namespace {

struct Refusal : std::runtime_error {
    using std::runtime_error::runtime_error;
};

bool prometheus_name(std::string_view s, bool allow_captures) {
    if (s.empty()) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        const bool ok = std::isalpha(c) || c == '_' || c == ':' || (i > 0 && std::isdigit(c)) ||
                        (allow_captures && (c == '$' || c == '{' || c == '}' || std::isdigit(c)));
        if (!ok) return false;
    }
    return true;
}

std::vector<std::string> split_dots(std::string_view s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const auto dot = s.find('.', start);
        out.emplace_back(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos) return out;
        start = dot + 1;
    }
}

std::string text_of(const YAML::Node& node, const std::string& path) {
    if (!node.IsScalar()) throw Refusal(path + ": expected text");
    return node.as<std::string>();
}

// The keys a mapping may have; those read and ignored say why in the docs (docs/envoy.md).
constexpr std::array known_keys{"match", "name", "labels", "match_type", "match_metric_type", "timer_type", "scale"};

StatsdMapper::Mapping read_mapping(const YAML::Node& m, const std::string& path) {
    if (!m.IsMap()) throw Refusal(path + ": expected a mapping {match, name, labels}");
    for (const auto& kv : m) {
        const auto key = kv.first.as<std::string>();
        if (std::find(known_keys.begin(), known_keys.end(), key) == known_keys.end()) {
            throw Refusal(path + "." + key + ": not supported (supported: match, name, labels, match_type, " +
                          "match_metric_type; timer_type and scale are read and ignored)");
        }
    }
    StatsdMapper::Mapping out;
    if (!m["match"]) throw Refusal(path + ".match: required");
    out.match = text_of(m["match"], path + ".match");
    if (m["match_type"]) {
        const auto type = text_of(m["match_type"], path + ".match_type");
        if (type != "glob" && type != "regex") throw Refusal(path + ".match_type: expected glob or regex, got " + type);
        out.regex = type == "regex";
    }
    if (out.regex) {
        try {
            out.pattern.emplace(out.match, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            throw Refusal(path + ".match: not a regular expression (" + e.what() + ")");
        }
    } else {
        out.glob_parts = split_dots(out.match);
    }
    if (m["match_metric_type"]) {
        const auto type = text_of(m["match_metric_type"], path + ".match_metric_type");
        if (type != "counter" && type != "gauge" && type != "observer") {
            throw Refusal(path + ".match_metric_type: expected counter, gauge or observer, got " + type);
        }
        out.counters = type == "counter";
    }
    if (!m["name"]) throw Refusal(path + ".name: required");
    out.name = text_of(m["name"], path + ".name");
    if (!prometheus_name(out.name, true)) throw Refusal(path + ".name: not a Prometheus metric name: " + out.name);
    if (const auto labels = m["labels"]) {
        if (!labels.IsMap()) throw Refusal(path + ".labels: expected name: value pairs");
        for (const auto& kv : labels) {
            const auto name = kv.first.as<std::string>();
            if (!prometheus_name(name, false) || name.find(':') != std::string::npos) {
                throw Refusal(path + ".labels." + name + ": not a Prometheus label name");
            }
            out.labels.emplace_back(name, text_of(kv.second, path + ".labels." + name));
        }
    }
    return out;
}

}  // namespace

result<StatsdMapper> StatsdMapper::parse(std::string_view yaml, std::string_view source) {
    try {
        const YAML::Node root = YAML::Load(std::string(yaml));
        if (!root.IsMap()) throw Refusal("expected `mappings:` at the top level");
        for (const auto& kv : root) {
            const auto key = kv.first.as<std::string>();
            if (key != "mappings") throw Refusal(key + ": not supported (only `mappings:` is read)");
        }
        const YAML::Node list = root["mappings"];
        if (!list || !list.IsSequence()) throw Refusal("mappings: expected a list");
        StatsdMapper out;
        for (std::size_t i = 0; i < list.size(); ++i) {
            out.mappings_.push_back(read_mapping(list[i], "mappings[" + std::to_string(i) + "]"));
        }
        return out;
    } catch (const Refusal& e) {
        return Problem{errc::invalid_request, std::string(source) + ": " + e.what()};
    } catch (const YAML::Exception& e) {
        return Problem{errc::invalid_request, std::string(source) + ": not YAML: " + e.what()};
    }
}

const StatsdMapper& StatsdMapper::erl_default() {
    static const StatsdMapper mapper = [] {
        auto parsed = parse(erl_default_mapping_yaml(), "the default mapping");
        if (!parsed) throw std::logic_error(parsed.error().detail);
        return std::move(*parsed);
    }();
    return mapper;
}

std::optional<MappedName> StatsdMapper::map(std::string_view statsd_name) const {
    std::vector<std::string> captures;
    const auto mapped = [&](const Mapping& m) {
        MappedName out{expand_captures(m.name, captures), {}};
        for (const auto& [label, value] : m.labels) out.labels.emplace_back(label, expand_captures(value, captures));
        return out;
    };
    // statsd_exporter tries the globs first, then the regular expressions, each in file order.
    for (const auto& m : mappings_) {
        if (!m.regex && m.counters && glob_match(m.glob_parts, statsd_name, captures)) return mapped(m);
    }
    for (const auto& m : mappings_) {
        if (!m.regex || !m.counters) continue;
        std::match_results<std::string_view::const_iterator> match;
        if (!std::regex_search(statsd_name.begin(), statsd_name.end(), match, *m.pattern)) continue;
        captures.clear();
        for (std::size_t g = 1; g < match.size(); ++g) captures.emplace_back(match[g].str());
        return mapped(m);
    }
    return std::nullopt;
}

std::string StatsdMapper::escape_name(std::string_view statsd_name) {
    std::string out;
    if (!statsd_name.empty() && std::isdigit(static_cast<unsigned char>(statsd_name.front()))) out += '_';
    for (char c : statsd_name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    return out;
}

}  // namespace ratelimitd::stats
