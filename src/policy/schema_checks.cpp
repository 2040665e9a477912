// The registry validator's primitives: the shared value rules, thrown as ConfigError.
#include "ratelimitd/policy/schema_checks.hpp"

#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/registry_loader.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <span>

namespace ratelimitd::policy {

namespace {
// quote()'s default cut: a longer key is quoted (and cut) as before.
constexpr std::size_t quote_bytes = 64;
}  // namespace

std::string path_segment(std::string_view key) {
    // Every field of every rule is joined into a path whether or not it fails (90,000 xDS
    // rules: half a million paths): a key quote() would leave as it is is taken as it is,
    // without quote()'s copy.
    const bool plain = key.size() <= quote_bytes && std::all_of(key.begin(), key.end(), [](char c) {
                           const auto u = static_cast<unsigned char>(c);
                           return u >= 0x20 && u < 0x7f && u != '"' && u != '\\';
                       });
    if (plain) return std::string(key);
    const std::string q = quote(key);
    return q.substr(1, q.size() - 2);
}

std::string join(const std::string& path, std::string_view key) {
    if (path.empty()) return path_segment(key);
    std::string out;
    out.reserve(path.size() + 1 + key.size());
    return out.append(path).append(1, '.').append(path_segment(key));
}

std::string join(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

std::string without_field_name(const Problem& problem, std::string_view field) {
    const std::string prefix = std::string(field) + ": ";
    if (!problem.detail.starts_with(prefix)) return problem.detail;
    return problem.detail.substr(prefix.size());
}

void SchemaChecks::fail(const std::string& path, const std::string& what) const {
    throw ConfigError(file_ + ": " + (path.empty() ? std::string("(top level)") : path) + ": " + what);
}

void SchemaChecks::check_keys(const ConfigTree& obj, const std::string& path,
                              std::initializer_list<std::string_view> allowed) const {
    check_keys(obj, path, std::span<const std::string_view>(allowed.begin(), allowed.size()));
}

void SchemaChecks::check_keys(const ConfigTree& obj, const std::string& path,
                              std::span<const std::string_view> allowed) const {
    for (const auto& [key, value] : obj.items()) {
        bool known = false;
        for (const auto a : allowed) known = known || a == key;
        if (!known) fail(join(path, key), "unknown key (expected one of: " + config::join_words(allowed, ", ") + ")");
    }
}

const ConfigTree* SchemaChecks::find(const ConfigTree& obj, std::string_view key) {
    const auto it = obj.find(std::string(key));
    return it == obj.end() ? nullptr : &*it;
}

const ConfigTree& SchemaChecks::require(const ConfigTree& obj, const std::string& path, std::string_view key,
                                        const std::string& expected) const {
    const ConfigTree* v = find(obj, key);
    if (v == nullptr) fail(join(path, key), "missing (expected " + expected + ")");
    return *v;
}

std::string SchemaChecks::need_string(const ConfigTree& v, const std::string& path,
                                      const std::string& expected) const {
    if (!v.is_string()) fail(path, "expected " + expected + ", got " + config::describe(v));
    return v.get<std::string>();
}

std::int64_t SchemaChecks::need_int(const ConfigTree& v, const std::string& path, std::int64_t lo,
                                    std::int64_t hi) const {
    auto n = config::integer_in(v, lo, hi);
    if (!n) fail(path, n.error().detail);
    return *n;
}

bool SchemaChecks::need_bool(const ConfigTree& v, const std::string& path) const {
    auto b = config::boolean_of(v);
    if (!b) fail(path, b.error().detail);
    return *b;
}

std::string SchemaChecks::need_one_of(const ConfigTree& v, const std::string& path,
                                      std::initializer_list<std::string_view> options) const {
    return need_one_of(v, path, std::span<const std::string_view>(options.begin(), options.size()));
}

std::string SchemaChecks::need_one_of(const ConfigTree& v, const std::string& path,
                                      std::span<const std::string_view> options) const {
    auto word = config::one_of(v, options);
    if (!word) fail(path, word.error().detail);
    return *word;
}

std::chrono::milliseconds SchemaChecks::need_duration(const ConfigTree& v, const std::string& path) const {
    auto d = config::duration_of(v);
    if (!d) fail(path, d.error().detail);
    return *d;
}

}  // namespace ratelimitd::policy
