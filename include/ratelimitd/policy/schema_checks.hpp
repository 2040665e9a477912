// The registry validator's primitives: each checks one value of the config tree and throws
// ConfigError "<file>: <field path>: <what was expected>" when it is wrong. The value rules
// themselves (and their wording) are config/tree_values.hpp, shared with the process settings.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/registry_reader.hpp"

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace ratelimitd::policy {

inline constexpr const char* name_charset = "1..64 bytes of A-Z, a-z, 0-9, '.', '_' or '-'";
inline constexpr const char* duration_example = "a duration such as \"500ms\", \"60s\" or \"1m\"";

/// A map key as it appears in a field path: printable as is, anything else escaped.
std::string path_segment(std::string_view key);
/// "routes" + "0" -> "routes[0]"; "" + "policies" -> "policies"; "policies" + "a" -> "policies.a".
std::string join(const std::string& path, std::string_view key);
std::string join(const std::string& path, std::size_t index);

/// A request rule's detail ("scope: ...") without its field name, which the field path replaces.
std::string without_field_name(const Problem& problem, std::string_view field);

/// What a section of the registry checks its values with; `file` names every message.
class SchemaChecks {
public:
    explicit SchemaChecks(const std::string& file) : file_(file) {}

    [[noreturn]] void fail(const std::string& path, const std::string& what) const;

    /// The allow-list: every key of `obj` must be one of `allowed`.
    void check_keys(const ConfigTree& obj, const std::string& path, std::initializer_list<std::string_view> allowed) const;
    void check_keys(const ConfigTree& obj, const std::string& path, std::span<const std::string_view> allowed) const;

    /// The value under `key`, or nullptr.
    static const ConfigTree* find(const ConfigTree& obj, std::string_view key);
    const ConfigTree& require(const ConfigTree& obj, const std::string& path, std::string_view key,
                              const std::string& expected) const;

    std::string need_string(const ConfigTree& v, const std::string& path, const std::string& expected) const;
    std::int64_t need_int(const ConfigTree& v, const std::string& path, std::int64_t lo, std::int64_t hi) const;
    bool need_bool(const ConfigTree& v, const std::string& path) const;
    std::string need_one_of(const ConfigTree& v, const std::string& path,
                            std::initializer_list<std::string_view> options) const;
    std::string need_one_of(const ConfigTree& v, const std::string& path,
                            std::span<const std::string_view> options) const;
    std::chrono::milliseconds need_duration(const ConfigTree& v, const std::string& path) const;

    [[nodiscard]] const std::string& file() const noexcept { return file_; }

private:
    const std::string& file_;
};

}  // namespace ratelimitd::policy
